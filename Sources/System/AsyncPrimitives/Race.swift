import Synchronization

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

/// Runs `event` against `sleep` and returns whichever finishes first, without waiting for the
/// loser: an `event` that cannot be cancelled (a read blocked in the kernel on a disk that no
/// longer answers) runs on in a task of its own and its value is dropped. For answers that must
/// come back whatever a resource does, such as `healthgate status` while the store hangs.
///
/// An error from either side is rethrown as the outcome, as ``race(sleep:event:)`` does; the
/// calling task's cancellation is not awaited either: the call returns when one side ends.
public func raceAbandoning<Value: Sendable>(
    sleep: @escaping @Sendable () async throws -> Void,
    event: @escaping @Sendable () async throws -> Value
) async throws -> RaceOutcome<Value> {
    let first = FirstOutcome<Value>()
    return try await withCheckedThrowingContinuation { continuation in
        first.wait(continuation)
        let eventTask = Task {
            do { first.resume(.success(.event(try await event()))) } catch { first.resume(.failure(error)) }
        }
        let sleepTask = Task {
            do {
                try await sleep()
                first.resume(.success(.timedOut))
            } catch {
                first.resume(.failure(error))
            }
        }
        first.onResume {
            eventTask.cancel()
            sleepTask.cancel()
        }
    }
}

/// The continuation of ``raceAbandoning(sleep:event:)``, resumed once by whichever side ends first.
private final class FirstOutcome<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<RaceOutcome<Value>, any Error>?
        var cancelLosers: (@Sendable () -> Void)?
        var resumed = false
    }
    private let state = Mutex(State())

    func wait(_ continuation: CheckedContinuation<RaceOutcome<Value>, any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    /// The first call resumes the caller; later ones are dropped.
    func resume(_ result: Result<RaceOutcome<Value>, any Error>) {
        let (continuation, cancel): (CheckedContinuation<RaceOutcome<Value>, any Error>?, (@Sendable () -> Void)?) =
            state.withLock { state in
                guard !state.resumed else { return (nil, nil) }
                state.resumed = true
                defer { state.continuation = nil }
                return (state.continuation, state.cancelLosers)
            }
        continuation?.resume(with: result)
        cancel?()
    }

    /// Runs `cancel` once a side has ended (at once when one already has).
    func onResume(_ cancel: @escaping @Sendable () -> Void) {
        let already = state.withLock { state in
            state.cancelLosers = cancel
            return state.resumed
        }
        if already { cancel() }
    }
}
