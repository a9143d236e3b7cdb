import AsyncPrimitives

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

    private struct Observer: Sendable {
        var id: UInt64
        var stage: Stage
        var action: @Sendable () -> Void
    }

    /// The stage and the actions still to run, behind the condition's one lock, so that an
    /// action registered while the stage moves either runs at registration or at the move.
    private struct State: Sendable {
        var stage = Stage.running
        var observers: [Observer] = []
        var nextID: UInt64 = 0
    }

    private let state = AsyncCondition(State())

    /// A signal at `.running`.
    public init() {}

    /// The current stage.
    public var stage: Stage { state.value.stage }

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
        let (stage, actions) = state.update { state -> (Stage, [@Sendable () -> Void]) in
            state.stage = max(state.stage, next(state.stage))
            let reached = state.stage
            let actions = state.observers.filter { $0.stage <= reached }.map(\.action)
            state.observers.removeAll { $0.stage <= reached }
            return (reached, actions)
        }
        // Outside the lock: an action may read the stage.
        for action in actions { action() }
        return stage
    }

    /// Suspends until the stop reaches `stage`, or until the calling task is cancelled.
    public func wait(for stage: Stage) async {
        do {
            try await state.wait { $0.stage >= stage }
        } catch {
            // CancellationError: the documented other way out; the caller checks its task.
        }
    }

    /// Runs `action` once, synchronously, on the thread that moves the stop to `stage` (at once,
    /// on the caller's thread, when it is there already). For work that must happen even when
    /// every task is stuck: interrupting blocked calls, arming the forced exit. `action` must be
    /// quick and must not block.
    /// - Returns: a handle whose ``Observation/cancel()`` withdraws the action.
    @discardableResult
    public func onStage(_ stage: Stage, _ action: @escaping @Sendable () -> Void) -> Observation {
        let id = state.update { state -> UInt64? in
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
            self?.state.update { state in state.observers.removeAll { $0.id == id } }
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
