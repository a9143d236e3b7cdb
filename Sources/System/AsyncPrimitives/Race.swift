/// Which side of a ``race(sleep:event:)`` finished first.
public enum RaceOutcome<Value: Sendable>: Sendable {
    /// The event finished first, with its value.
    case event(Value)
    /// The sleep finished first; the event was cancelled.
    case timedOut
}

/// Runs `event` against `sleep` and returns whichever finishes first, cancelling the other and
/// waiting for it to end (structured: nothing outlives the call).
///
/// `sleep` is usually `{ try await clock.sleep(for: interval) }` on an injected clock, so tests
/// drive it with a manual clock. An error from `event` is rethrown; an error from `sleep` other
/// than cancellation (a clock that cannot sleep) is rethrown too. When the calling task is
/// cancelled both sides are, and the call throws `CancellationError`.
public func race<Value: Sendable>(
    sleep: @escaping @Sendable () async throws -> Void,
    event: @escaping @Sendable () async throws -> Value
) async throws -> RaceOutcome<Value> {
    try await withThrowingTaskGroup(of: RaceOutcome<Value>.self) { group in
        group.addTask { .event(try await event()) }
        group.addTask {
            try await sleep()
            return .timedOut
        }
        defer { group.cancelAll() }
        // The first child to finish decides; the loser is cancelled by the defer and awaited by
        // the group before it returns.
        guard let first = try await group.next() else { throw CancellationError() }
        return first
    }
}
