import Synchronization

/// The gateway's stop request: the first request asks for a graceful stop, the second forces it.
///
/// The executable calls ``requestStop()`` from its SIGINT/SIGTERM handlers (and when
/// `--duration` runs out); the gateway waits on it. Thread-safe.
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

    private struct State {
        var stage = Stage.running
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

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
        let (stage, ready) = state.withLock { state -> (Stage, [Waiter]) in
            state.stage = max(state.stage, next(state.stage))
            let ready = state.waiters.filter { $0.stage <= state.stage }
            state.waiters.removeAll { $0.stage <= state.stage }
            return (state.stage, ready)
        }
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
}
