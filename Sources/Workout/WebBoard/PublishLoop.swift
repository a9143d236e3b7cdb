import WorkoutPresentation

/// The waits of the thread that publishes the board's changes (``BoardServer/publishChanges(from:)``):
/// until a reading changed the board, then ``BoardUpdate/coalescingMilliseconds`` more so that the
/// readings of that moment go out in one event, or until ``BoardUpdate/refreshSeconds`` passed
/// (the running figures change every second). Timed on CLOCK_MONOTONIC by ``ThreadCondition``.
// @unchecked Sendable: `pending` and `stopped` are read and written only while `condition` (a
// pthread mutex, which the publishing thread waits on) is locked.
final class PublishLoop: @unchecked Sendable {
    private let condition = ThreadCondition()
    private var pending = false
    private var stopped = false

    /// A reading changed the board (any thread, never blocking for long).
    func wake() {
        condition.lock()
        pending = true
        condition.broadcast()
        condition.unlock()
    }

    /// Ends the loop: ``next()`` returns false.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until the board is due to be looked at again; false once stopped.
    func next() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let refresh = ThreadCondition.deadline(after: BoardUpdate.refreshSeconds)
        while !stopped, !pending {
            if !condition.wait(until: refresh) { break }
        }
        if pending, !stopped {
            let window = ThreadCondition.deadline(after: Double(BoardUpdate.coalescingMilliseconds) / 1000)
            while !stopped {
                if !condition.wait(until: window) { break }
            }
        }
        pending = false
        return !stopped
    }
}
