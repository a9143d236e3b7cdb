import Synchronization

/// Whether discovery currently sees a followed device, shared between the discovery loop (which
/// writes it) and the device's session (which waits on it). Thread-safe.
final class DevicePresence: Sendable {
    private struct State {
        var present = true
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    }

    private let state = Mutex(State())

    var isPresent: Bool { state.withLock { $0.present } }

    func update(present: Bool) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.present = present
            guard present else { return [] }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Returns once the device is present; throws `CancellationError` when cancelled.
    func waitUntilPresent() async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if state.present { return true }
                    state.waiters[id] = continuation
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
            waiter?.resume(throwing: CancellationError())
        }
    }
}
