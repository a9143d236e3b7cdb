import GatewayRuntime
import HealthStore
import SampleBus

// Retention: a follower whose receiver falls too far behind skips the oldest whole transactions
// (`follow.maxBytes`, `follow.maxAgeSeconds`).
extension Follower {
    /// Skips the oldest changes when the follower is beyond its bounds: its cursor in the store,
    /// the window, the reading and the status move past them. Returns the window's actions.
    func applyRetention(
        window: inout DeliveryWindow, reading: inout LogReading, now: Duration, context: FollowerContext
    ) async throws -> [DeliveryWindow.Action] {
        guard let target = try await retentionSkip(from: window.committed, episode: &reading.skipEpisode, context: context) else {
            return []
        }
        let actions = window.skip(through: target, now: now)
        reading.passed(target)
        publish(cursor: target, context: context)
        return actions
    }

    /// Skips the oldest changes when what the follower has not acknowledged (its committed
    /// cursor `anchor`) exceeds its bounds, in the store; returns the new committed cursor, or nil.
    private func retentionSkip(from anchor: Int64, episode: inout Bool, context: FollowerContext) async throws -> Int64? {
        let follow = settings.follow
        // Ages are measured on the store's clock, the one that dated the commits.
        guard let skip = try await store.retentionSkip(
            after: anchor, maxBytes: follow.maxBytes, maxAgeSeconds: follow.maxAgeSeconds)
        else {
            // Within its bounds again: the episode is over.
            episode = false
            return nil
        }
        try await store.skip(follower: name, to: skip.anchor, count: skip.count)
        context.status.recordsDropped(Int(clamping: skip.count))
        if !episode {
            episode = true
            context.logger.warning(
                "\(receiver.destination) is too far behind: skipping \(String(count: skip.count, "change")) (anchors \(anchor + 1)…\(skip.anchor)) "
                    + "beyond follow.maxBytes \(follow.maxBytes) / follow.maxAgeSeconds \(ConfigurationDecoder.format(follow.maxAgeSeconds)); "
                    + "it never gets them. Logged once until it catches up")
        }
        return skip.anchor
    }
}
