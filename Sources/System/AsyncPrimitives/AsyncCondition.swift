import Synchronization

/// A value that tasks can wait on until it satisfies a predicate.
///
/// This is the one cancellable waiter of the code base: a state value behind a `Mutex`, updates
/// that wake exactly the waiters whose predicate now holds, and waits that end with
/// `CancellationError` when the waiting task is cancelled (the waiter is removed at once, not at
/// the next update). A one-shot event is `AsyncCondition<Bool>`; a stop request with stages is
/// an `AsyncCondition` of the stage.
///
/// Thread-safe. Predicates run while the lock is held: keep them short and free of side effects.
public final class AsyncCondition<Value: Sendable>: Sendable {
    private struct Waiter {
        var predicate: @Sendable (Value) -> Bool
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var value: Value
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    /// A condition holding `value`.
    public init(_ value: Value) {
        state = Mutex(State(value: value))
    }

    /// The current value.
    public var value: Value { state.withLock { $0.value } }

    /// Changes the value and wakes every waiter whose predicate holds for the new value.
    /// Returns what `body` returns.
    @discardableResult
    public func update<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        let (result, ready) = try state.withLock { state -> (Result, [CheckedContinuation<Void, any Error>]) in
            let result = try body(&state.value)
            var ready: [CheckedContinuation<Void, any Error>] = []
            for (id, waiter) in state.waiters where waiter.predicate(state.value) {
                ready.append(waiter.continuation)
                state.waiters[id] = nil
            }
            return (result, ready)
        }
        for continuation in ready { continuation.resume() }
        return result
    }

    /// Sets the value (see ``update(_:)``).
    public func set(_ value: Value) {
        update { $0 = value }
    }

    /// Returns once `predicate` holds for the value: at once if it already does.
    /// - Throws: `CancellationError` when the calling task is cancelled before that.
    public func wait(until predicate: @escaping @Sendable (Value) -> Bool) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Bool? in
                    if predicate(state.value) { return true }
                    if Task.isCancelled { return false }
                    state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                    return nil
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// How many tasks are waiting (for tests and status).
    public var waiterCount: Int { state.withLock { $0.waiters.count } }
}
