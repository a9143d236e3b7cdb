import GatewayRuntime
import HealthStore
import SampleBus

// Reading the log into batches: the ranges begun before the last stop, rebuilt, then the next
// ranges of the log, each committed before it is first sent.
extension Follower {
    /// The next batch to begin: the oldest range begun before the last stop (empty when the
    /// receiver acknowledged it then), else the next range of the log (its range and key
    /// committed first); nil when there is none yet (a partial batch starts its interval).
    func nextBatch(
        _ reading: inout LogReading, timers: inout Timers, group: inout ThrowingTaskGroup<Event, any Error>, context: FollowerContext
    ) async throws -> FollowerBatch? {
        if let begun = reading.nextReplay() {
            if begun.acknowledged {
                // The receiver has it: nothing to send, the cursor may pass it in turn.
                return batch(after: begun.after, through: begun.through, changes: [])
            }
            return try await rebuild(begun, context: context)
        }
        switch try await readBatch(&reading, context: context) {
        case .batch(let batch):
            reading.read(batch)
            return batch
        case .partial(let latest):
            if reading.waitForInterval(latest: latest) { startInterval(&timers, group: &group, context: context) }
            return nil
        case .nothing:
            return nil
        }
    }

    private enum Read {
        case batch(FollowerBatch)
        /// Fewer changes than a batch, younger than the interval: wait. `latest` is the store's
        /// latest anchor at the read.
        case partial(latest: Int64)
        case nothing
    }

    /// The next batch after the read position, its range committed; `.partial` when the changes
    /// after it do not fill a batch and have not waited their interval yet.
    private func readBatch(_ reading: inout LogReading, context: FollowerContext) async throws -> Read {
        let anchor = reading.readFrom
        let page: StoreChanges
        switch await readPage(after: anchor) {
        case .success(let read):
            page = read
        case .failure(let error) where error.code == .unknownAnchor:
            context.logger.warning("the cursor \(anchor) is not in the store's log (the store was replaced); starting again at 0")
            try await store.skip(follower: name, to: 0, count: 0)
            reading.restart(at: 0)
            return .nothing
        case .failure(let error) where error.code == .anchorExpired:
            let purged = try await store.logBounds().purgedThrough
            context.logger.warning(
                "the store no longer holds the deletions between anchor \(anchor) and \(purged); they are not sent. "
                    + "Resuming at the oldest change kept")
            context.status.reportError("deletions before anchor \(purged) were purged before they were sent")
            try await store.skip(follower: name, to: purged, count: 0)
            reading.restart(at: purged)
            return .nothing
        case .failure(let error):
            throw error
        }
        let count = page.added.count + page.deleted.count
        if count == 0 {
            guard page.anchor > anchor else { return .nothing }
            // Anchors with nothing left at them (objects moved on or pruned): passed over.
            return .batch(batch(after: anchor, through: page.anchor, changes: []))
        }
        if !page.hasMore, count < self.settings.batchSize, self.settings.batchInterval > .zero, !reading.partialDue,
            !context.stopRequest.isRequested
        {
            return .partial(latest: page.anchor)
        }
        let batch = self.batch(after: anchor, through: page.anchor, changes: FollowedChange.changes(of: page).filter(receiver.accepts))
        try await store.beginBatch(follower: name, after: anchor, through: page.anchor, key: batch.key)
        return .batch(batch)
    }

    /// The changes after `anchor`, at most a batch.
    private func readPage(after anchor: Int64) async -> Result<StoreChanges, StoreError> {
        do {
            return .success(try await store.changes(since: anchor, limit: settings.batchSize, includingCorrelationMembers: false))
        } catch {
            return .failure(error)
        }
    }

    /// The batch of a range begun before a stop or crash, from what the store holds in it now,
    /// under the key of what it carries now: the key it was sent under when nothing in it moved
    /// on and the receiver's settings are the same, another one otherwise (committed with the
    /// range, and logged).
    private func rebuild(_ begun: BegunBatch, context: FollowerContext) async throws -> FollowerBatch {
        let span = max(1, Int(clamping: begun.through - begun.after))
        let page = try await store.changes(since: begun.after, limit: span, includingCorrelationMembers: false)
        let changes = FollowedChange.changes(of: page).filter { $0.anchor <= begun.through && receiver.accepts($0) }
        let rebuilt = batch(after: begun.after, through: begun.through, changes: changes)
        if let key = begun.key, key != rebuilt.key {
            try await store.beginBatch(follower: name, after: begun.after, through: begun.through, key: rebuilt.key)
            context.logger.info(
                "the batch of anchors \(begun.after + 1)…\(begun.through) begun before the last stop is sent under a new key, "
                    + "\(rebuilt.key) (it was \(key)): an object in it moved on to a later version since, or the sink's settings changed")
        }
        return rebuilt
    }

    /// A batch of `changes` for this follower's receiver (its key names its payload, ``BatchKey``).
    func batch(after: Int64, through: Int64, changes: [FollowedChange]) -> FollowerBatch {
        FollowerBatch(after: after, through: through, changes: changes, payloadIdentity: receiver.payloadIdentity)
    }
}
