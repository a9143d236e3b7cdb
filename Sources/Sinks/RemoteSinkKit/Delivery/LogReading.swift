import HealthStore

/// What a follower's driver knows of the log beyond its ``DeliveryWindow``: where reading goes
/// on, the ranges begun before the last stop still to send, the window's batches by slot, the
/// dead letters being sent again, and the state of a partial batch waiting for its interval.
///
/// Pure: no I/O and no clock. The driver (``Follower``) reads the store and tells it what it
/// read; it answers where to read next and when a partial batch's interval starts.
struct LogReading: Sendable {
    /// The anchor reading goes on after.
    private(set) var readFrom: Int64
    /// The greatest anchor seen in the store: the waiter waits for commits above it, not above
    /// the read position (a partial batch waiting its interval lies between the two).
    private(set) var seen: Int64
    /// The ranges begun before the last stop that reach past the cursor, oldest first, not taken
    /// yet (``nextReplay()``).
    private(set) var replay: [BegunBatch]
    /// The window's batches by slot (a dead-letter retry's range is (0, 0]).
    var batches: [Int: FollowerBatch] = [:]
    /// The rows of the dead letters being sent again, while the window sends them.
    var deadLetterRows: [Int64] = []
    /// Whether a retention skip episode is under way (logged once per episode).
    var skipEpisode = false
    /// The read position at which the changes did not fill a batch; nil when none waits.
    private(set) var partialAfter: Int64?
    /// Whether the changes after ``partialAfter`` waited their interval: send them as they are.
    private(set) var partialDue = false

    /// Reading from `anchor` (the committed cursor), after sending again the ranges in `begun`
    /// (those begun before the last stop) that reach past it.
    init(from anchor: Int64, begun: [BegunBatch] = []) {
        readFrom = anchor
        seen = anchor
        replay = begun.filter { $0.through > anchor }
    }

    /// The anchor above which a commit is news: a batch may be read.
    var waitsAbove: Int64 { max(readFrom, seen) }

    /// Takes the oldest range begun before the last stop; reading goes on after it.
    mutating func nextReplay() -> BegunBatch? {
        guard !replay.isEmpty else { return nil }
        let begun = replay.removeFirst()
        readFrom = max(readFrom, begun.through)
        return begun
    }

    /// `batch` was read from the log: reading goes on after it, and no partial batch waits.
    mutating func read(_ batch: FollowerBatch) {
        partialDue = false
        partialAfter = nil
        readFrom = batch.through
    }

    /// The changes after the read position do not fill a batch and have not waited their
    /// interval; `latest` is the store's latest anchor at the read.
    /// - Returns: whether their interval starts now (the first time at this read position).
    mutating func waitForInterval(latest: Int64) -> Bool {
        seen = max(seen, latest)
        guard partialAfter != readFrom else { return false }
        partialAfter = readFrom
        return true
    }

    /// A partial batch's interval passed: the changes are due, unless reading moved on since.
    mutating func intervalPassed() {
        if partialAfter == readFrom { partialDue = true }
    }

    /// The log no longer holds the read position (the store was replaced, or purged the
    /// deletions after it): reading goes on after `anchor`.
    mutating func restart(at anchor: Int64) {
        readFrom = anchor
    }

    /// Retention moved the cursor to `target`: reading goes on from there, and the ranges and
    /// batches it passed are dropped.
    mutating func passed(_ target: Int64) {
        readFrom = max(readFrom, target)
        replay.removeAll { $0.through <= target }
        dropBatches(through: target)
    }

    /// The cursor was committed through `anchor`: the batches it passed are done.
    mutating func committed(through anchor: Int64) {
        dropBatches(through: anchor)
    }

    /// Drops the window's batches through `anchor`, not a dead-letter retry's.
    private mutating func dropBatches(through anchor: Int64) {
        batches = batches.filter { $0.value.through > anchor || $0.value.through == 0 }
    }
}
