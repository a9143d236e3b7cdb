import Synchronization

/// Wake-ups between the sink's intake and delivery tasks: "records arrived", "room freed",
/// "intake finished" (which also ends a backoff: see ``waitForIntakeEnd()``). A signal sent while nobody waits is remembered, so none is lost.
/// Waiting honours cancellation. Thread-safe.
final class DeliverySignals: Sendable {
    private struct State {
        var recordsPending = false
        var roomPending = false
        var intakeFinished = false
        var recordWaiter: CheckedContinuation<Void, Never>?
        var roomWaiter: CheckedContinuation<Void, Never>?
        var endWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
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
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.intakeFinished = true
            state.recordsPending = true
            let waiters = Array(state.endWaiters.values) + (state.recordWaiter.map { [$0] } ?? [])
            state.recordWaiter = nil
            state.endWaiters = [:]
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the intake finished (the inbox ended: the gateway is stopping), or on
    /// cancellation.
    func waitForIntakeEnd() async {
        let token = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.intakeFinished || Task.isCancelled { return true }
                    state.endWaiters[token] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.endWaiters.removeValue(forKey: token) }?.resume()
        }
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
