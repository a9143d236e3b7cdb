import FoundationEssentials

/// The board's updates, handed to every event stream: the whole board now (what a new reader, or
/// one too far behind, gets first) and the last ``changesKept`` changes (what a reader that keeps
/// up gets, in order), with a sequence number that readers wait on.
///
/// Bounded by design: a reader more than ``changesKept`` changes behind gets the whole board
/// instead, so nothing shown is lost, only intermediate states; ``skipped`` counts the changes
/// readers never saw. Waiting blocks the calling thread, so only the web server's own connection
/// threads call ``next(after:timeout:)``, never Swift's cooperative pool.
// @unchecked Sendable: every mutable stored property is read and written only while `condition`
// (a pthread mutex, which waiting threads block on) is locked. Not a Mutex: the waits need the
// condition variable that goes with the lock, which Synchronization.Mutex does not offer.
final class EventBroadcast: @unchecked Sendable {
    /// Changes kept for readers that are behind (at 20 events a second, 3 s).
    static let changesKept = 64

    private let condition = ThreadCondition()
    private var sequence: UInt64 = 0
    /// The whole board now, encoded only when a reader needs it (most changes have none behind).
    private var whole: @Sendable () -> [UInt8] = { [] }
    private var wholeEncoded: [UInt8]?
    /// The changes numbered `sequence - changes.count + 1 ... sequence`, oldest first.
    private var changes: [[UInt8]] = []
    private var closed = false
    private var skippedCount = 0

    /// What a wait returns.
    enum Next: Equatable {
        /// The payloads to send, in order, and the sequence number they bring the reader to.
        case update(UInt64, [[UInt8]])
        /// Nothing newer within the timeout.
        case idle
        /// The broadcast is closed: the server stops.
        case closed
    }

    /// Publishes a change: `change` for readers up to date, `whole` (the board with the change)
    /// for the others, made at most once and only if a reader needs it (called with the lock
    /// held, on that reader's thread). Wakes every reader.
    func publish(whole: @escaping @Sendable () -> [UInt8], change: [UInt8]) {
        condition.lock()
        sequence += 1
        self.whole = whole
        wholeEncoded = nil
        changes.append(change)
        if changes.count > Self.changesKept { changes.removeFirst(changes.count - Self.changesKept) }
        condition.broadcast()
        condition.unlock()
    }

    /// Waits up to `timeout` for anything newer than `seen` (0: nothing seen yet).
    func next(after seen: UInt64, timeout: TimeInterval) -> Next {
        condition.lock()
        defer { condition.unlock() }
        let deadline = ThreadCondition.deadline(after: max(0, min(timeout, 86_400)))
        while !closed, sequence <= seen {
            if !condition.wait(until: deadline) { break }
        }
        if closed { return .closed }
        guard sequence > seen else { return .idle }
        let behind = Int(sequence - seen)
        if seen > 0, behind <= changes.count { return .update(sequence, Array(changes.suffix(behind))) }
        if seen > 0 { skippedCount += behind }
        let encoded = wholeEncoded ?? whole()
        wholeEncoded = encoded
        return .update(sequence, [encoded])
    }

    /// Wakes every reader for good.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Changes some reader skipped because it was too far behind (it got the whole board instead).
    var skipped: Int {
        condition.lock()
        defer { condition.unlock() }
        return skippedCount
    }
}
