public import FoundationEssentials
public import HealthModel

extension HealthStore {
    /// Writes `records` and then `checkpoints` (in order; a later one with the same namespace
    /// and key replaces an earlier one) in ONE transaction on the writer's queue: a checkpoint
    /// is never stored without the records published with it, nor they without it.
    ///
    /// Whose each reading is is decided in that transaction, by its own start, against the wear
    /// intervals, erasures and people (``attributeReadings(by:)``) committed before it: a
    /// reading with no ``HealthModel/MetadataKey/person`` gets one where the rules give one
    /// (``HealthModel/PersonAttribution``), and a reading (or workout) of a person erased
    /// after its start is not stored (``AttributionCounts/erased``).
    ///
    /// Idempotent: a record stored already changes nothing (see ``WriteSummary/ignored``), so
    /// a batch can be written again after a failure.
    /// - Throws: ``StoreError``: `.readOnly` for a read-only store, `.diskFull` for SQLITE_FULL,
    ///   `.ioError` for SQLITE_IOERR. On any error nothing of the call is stored.
    @discardableResult
    public func write(_ records: [HealthRecord], checkpoints: [SourceCheckpoint] = []) async throws(StoreError) -> WriteSummary {
        try await requireWriter().perform { writer throws(StoreError) in try writer.write(records, checkpoints: checkpoints) }
    }

    /// The people the configuration lists (their own and shared devices, their reference
    /// weights): from the next write on, the writer attributes each reading it commits by them,
    /// with the wear intervals and erasures the store holds (``write(_:checkpoints:)``), and
    /// ``currentAttribution`` is that attribution from now on.
    /// - Throws: ``StoreError`` `.readOnly` for a read-only store, or the failure to read the
    ///   intervals and erasures.
    public func attributeReadings(by roster: AttributionRoster) async throws(StoreError) {
        try await requireWriter().perform { writer throws(StoreError) in
            writer.setAttributionRoster(roster)
            try writer.publishAttributionRules()
        }
    }

    /// What the writer's attribution did since the store was opened: readings committed with a
    /// person, with none (by reason), and an erased person's not stored. Empty for a read-only
    /// store.
    public var attributionCounts: AttributionCounts { committedAttribution?.counts ?? AttributionCounts() }

    /// The attribution the writer's latest commit was decided by (``HealthModel/ReadingAttribution``),
    /// for a live view of readings not committed yet (a workout's figures on the board): what is
    /// stored and sent is decided in the transaction that stores it. nil before the first write,
    /// and for a read-only store.
    public var currentAttribution: ReadingAttribution? { committedAttribution?.attribution }

    /// Deletes the objects `selection` names, in one transaction, each leaving a tombstone in the
    /// change log. Refused, deleting nothing, when a running workout collects a selected sample.
    /// - Returns: the uuids and kinds deleted, by uuid; empty when nothing matched a range.
    /// - Throws: ``StoreError`` `.invalidArgument` for an unknown uuid or an empty range,
    ///   `.inUse` for a sample of a running workout, `.readOnly`, or the SQLite failure.
    public func delete(_ selection: DeletionSelection) async throws(StoreError) -> [(id: SampleID, kind: HealthRecordKind)] {
        try await requireWriter().perform { writer throws(StoreError) in
            let deleted = try writer.delete(selection)
            // An erasure changes what readings may be stored.
            if case .person = selection { writer.publishAttributionRulesAfterCommit() }
            return deleted
        }
    }

    /// Deletes the tombstones of objects deleted before `date`, in one transaction; a client
    /// whose anchor is older then gets `.anchorExpired` and reads again from anchor 0.
    /// - Returns: how many tombstones went.
    @discardableResult
    public func purgeTombstones(deletedBefore date: Date) async throws(StoreError) -> Int {
        try await requireWriter().perform { writer throws(StoreError) in try writer.purgeTombstones(deletedBefore: date) }
    }

    /// Sets the database's size limit in pages (`PRAGMA max_page_count`); reaching it behaves
    /// like a full disk. nil lifts the limit to SQLite's largest.
    public func setMaximumPageCount(_ pages: Int?) async throws(StoreError) {
        // SQLite's largest max_page_count (https://sqlite.org/limits.html).
        let limit = pages ?? 4_294_967_294
        try await requireWriter().perform { writer throws(StoreError) in try writer.setMaximumPageCount(limit) }
    }

    /// Folds the write-ahead log into the database file (`PRAGMA wal_checkpoint(TRUNCATE)`).
    public func checkpointLog() async throws(StoreError) {
        try await requireWriter().perform { writer throws(StoreError) in try writer.checkpoint() }
    }
}
