import Synchronization

/// Wake-ups between the sink's intake and delivery tasks: "records arrived", "room freed",
/// "intake finished". A signal sent while nobody waits is remembered, so none is lost.
/// Waiting honours cancellation. Thread-safe.
final class DeliverySignals: Sendable {
    private struct State {
        var recordsPending = false
        var roomPending = false
        var intakeFinished = false
        var recordWaiter: CheckedContinuation<Void, Never>?
        var roomWaiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    var intakeFinished: Bool { state.withLock { $0.intakeFinished } }

    func recordsArrived() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.recordsPending = true
            defer { state.recordWaiter = nil }
            return state.recordWaiter
        }?.resume()
    }

    func roomFreed() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.roomPending = true
            defer { state.roomWaiter = nil }
            return state.roomWaiter
        }?.resume()
    }

    func finishIntake() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.intakeFinished = true
            state.recordsPending = true
            defer { state.recordWaiter = nil }
            return state.recordWaiter
        }?.resume()
    }

    /// Returns once records arrived (or intake finished) since the last wait, or on cancellation.
    func waitForRecords() async {
        await wait(room: false)
    }

    /// Returns once room was freed since the last wait, or on cancellation.
    func waitForRoom() async {
        await wait(room: true)
    }

    private func wait(room: Bool) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    let pending = room ? state.roomPending : state.recordsPending
                    if pending || Task.isCancelled {
                        if room { state.roomPending = false } else { state.recordsPending = false }
                        return true
                    }
                    if room { state.roomWaiter = continuation } else { state.recordWaiter = continuation }
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                let waiter = room ? state.roomWaiter : state.recordWaiter
                if room { state.roomWaiter = nil } else { state.recordWaiter = nil }
                return waiter
            }?.resume()
        }
        state.withLock { state in
            if room { state.roomPending = false } else { state.recordsPending = false }
        }
    }
}
