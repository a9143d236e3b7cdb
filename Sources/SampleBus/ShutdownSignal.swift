import Synchronization

/// The gateway's stop request: the first request asks for a graceful stop, the second forces it.
///
/// The executable calls ``requestStop()`` from its signal handlers (and when `--duration` runs
/// out); the gateway waits on it, and plugins see it through ``StopRequest``. Thread-safe.
public final class ShutdownSignal: Sendable {
    /// The stages of a stop.
    public enum Stage: Int, Comparable, Sendable {
        case running = 0, stopping, forced
        public static func < (lhs: Stage, rhs: Stage) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    private struct Waiter {
        var id: UInt64
        var stage: Stage
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct Observer {
        var id: UInt64
        var stage: Stage
        var action: @Sendable () -> Void
    }

    private struct State {
        var stage = Stage.running
        var waiters: [Waiter] = []
        var observers: [Observer] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// A signal at `.running`.
    public init() {}

    /// The current stage.
    public var stage: Stage { state.withLock { $0.stage } }

    /// Advances one stage: running → stopping → forced. Returns the new stage.
    @discardableResult
    public func requestStop() -> Stage {
        advance { $0 == .running ? .stopping : .forced }
    }

    /// Goes straight to `forced`.
    public func force() {
        _ = advance { _ in .forced }
    }

    private func advance(_ next: (Stage) -> Stage) -> Stage {
        let (stage, ready, actions) = state.withLock { state -> (Stage, [Waiter], [@Sendable () -> Void]) in
            state.stage = max(state.stage, next(state.stage))
            let ready = state.waiters.filter { $0.stage <= state.stage }
            state.waiters.removeAll { $0.stage <= state.stage }
            let actions = state.observers.filter { $0.stage <= state.stage }.map(\.action)
            state.observers.removeAll { $0.stage <= state.stage }
            return (state.stage, ready, actions)
        }
        // Outside the lock: an action may read the stage.
        for action in actions { action() }
        for waiter in ready { waiter.continuation.resume() }
        return stage
    }

    /// Suspends until the stop reaches `stage`, or until the calling task is cancelled.
    public func wait(for stage: Stage) async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.stage >= stage || Task.isCancelled { return true }
                    state.waiters.append(Waiter(id: id, stage: stage, continuation: continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume()
        }
    }

    /// Runs `action` once, synchronously, on the thread that moves the stop to `stage` (at once,
    /// on the caller's thread, when it is there already). For work that must happen even when
    /// every task is stuck: interrupting blocked calls, arming the forced exit. `action` must be
    /// quick and must not block.
    /// - Returns: a handle whose ``Observation/cancel()`` withdraws the action.
    @discardableResult
    public func onStage(_ stage: Stage, _ action: @escaping @Sendable () -> Void) -> Observation {
        let id = state.withLock { state -> UInt64? in
            guard state.stage < stage else { return nil }
            state.nextID += 1
            state.observers.append(Observer(id: state.nextID, stage: stage, action: action))
            return state.nextID
        }
        guard let id else {
            action()
            return Observation(cancel: {})
        }
        return Observation { [weak self] in
            self?.state.withLock { state in state.observers.removeAll { $0.id == id } }
        }
    }

    /// A registered ``onStage(_:_:)`` action.
    public struct Observation: Sendable {
        private let body: @Sendable () -> Void
        init(cancel: @escaping @Sendable () -> Void) { body = cancel }
        /// Withdraws the action if it has not run yet.
        public func cancel() { body() }
    }
}
