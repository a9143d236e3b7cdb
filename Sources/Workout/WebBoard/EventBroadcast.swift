import FoundationEssentials

/// The latest board update, handed to every event stream: a single slot (the newest payload and
/// its sequence number) that readers wait on.
///
/// Bounded by design: a reader that is slower than the updates skips to the newest one (the
/// board sends whole snapshots, so nothing is lost but intermediate states); ``skipped`` counts
/// the updates readers never saw. Waiting blocks the calling thread, so only the web server's
/// own connection threads call ``next(after:timeout:)``, never Swift's cooperative pool.
// @unchecked Sendable: every mutable stored property is read and written only while `condition`
// (a pthread mutex, which waiting threads block on) is locked. Not a Mutex: the waits need the
// condition variable that goes with the lock, which Synchronization.Mutex does not offer.
final class EventBroadcast: @unchecked Sendable {
    private let condition = ThreadCondition()
    private var sequence: UInt64 = 0
    private var payload: [UInt8] = []
    private var closed = false
    private var skippedCount = 0

    /// What a wait returns.
    enum Next: Equatable {
        /// A newer payload and its sequence number.
        case update(UInt64, [UInt8])
        /// Nothing newer within the timeout.
        case idle
        /// The broadcast is closed: the server stops.
        case closed
    }

    /// Replaces the payload and wakes every reader.
    func publish(_ bytes: [UInt8]) {
        condition.lock()
        sequence += 1
        payload = bytes
        condition.broadcast()
        condition.unlock()
    }

    /// Waits up to `timeout` for a payload newer than `seen`.
    func next(after seen: UInt64, timeout: TimeInterval) -> Next {
        condition.lock()
        defer { condition.unlock() }
        let deadline = ThreadCondition.deadline(after: max(0, min(timeout, 86_400)))
        while !closed, sequence <= seen {
            if !condition.wait(until: deadline) { break }
        }
        if closed { return .closed }
        guard sequence > seen else { return .idle }
        if seen > 0 { skippedCount += Int(sequence - seen - 1) }
        return .update(sequence, payload)
    }

    /// Wakes every reader for good.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Updates some reader skipped because a newer one replaced it first.
    var skipped: Int {
        condition.lock()
        defer { condition.unlock() }
        return skippedCount
    }
}
