public import FoundationEssentials
public import HealthModel

/// What ``HealthStore/correctClock(onto:)`` moved.
public struct ClockCorrection: Sendable, Hashable {
    /// Records written again with moved dates (a correlation with its members counts once).
    public var records = 0
    /// Entries of workouts in progress (or ended and not yet stored) whose dates moved.
    public var journalEntries = 0
    /// Commit and tombstone dates of the change log that moved.
    public var logEntries = 0

    public init(records: Int = 0, journalEntries: Int = 0) {
        self.records = records
        self.journalEntries = journalEntries
    }

    /// Whether no record nor journal entry moved (log dates aside).
    public var isEmpty: Bool { records == 0 && journalEntries == 0 }
}

extension HealthStore {
    /// Moves everything taken on an earlier base of the gateway's clock in `base`'s boot onto
    /// `base` (see ``ClockBase``), in one transaction: after the wall clock stepped, the dates the
    /// gateway read from it before the step are moved by the step, so they are what the clock says
    /// now, and durations between them are what the monotonic clock measured.
    ///
    /// Records (their metadata carries ``MetadataKey/bootID`` and ``MetadataKey/clockBase``) are
    /// written again at new anchors with their dates moved, the new base, and
    /// ``MetadataKey/clockCorrected`` adding up the seconds: every follower sends them again, as a
    /// new version with the same uuid. Records dated by a device's own clock carry no base and
    /// stay. Workout journal entries are moved in place.
    ///
    /// With `previous`, the base before the step (of the same boot), the dates of the change
    /// log's commits and tombstones written on it since the boot move too: a follower's backlog
    /// then keeps its true age (a step of +56 years would otherwise make it look older than any
    /// `maxAgeSeconds` and skip it), and tombstones their true purge date. `now` is the wall
    /// clock after the step.
    /// - Throws: ``StoreError`` when the transaction fails; then nothing moved.
    @discardableResult
    public func correctClock(onto base: ClockBase, from previous: ClockBase? = nil, now: Date = Date()) async throws(StoreError) -> ClockCorrection {
        try await requireWriter().perform { writer throws(StoreError) in try writer.correctClock(onto: base, from: previous, now: now) }
    }
}
