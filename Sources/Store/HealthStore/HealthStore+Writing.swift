public import FoundationEssentials
public import HealthModel

extension HealthStore {
    /// Writes `records` and then `checkpoints` (in order; a later one with the same namespace
    /// and key replaces an earlier one) in ONE transaction on the writer's queue: a checkpoint
    /// is never stored without the records published with it, nor they without it.
    ///
    /// Idempotent: a record stored already changes nothing (see ``WriteSummary/ignored``), so
    /// a batch can be written again after a failure.
    /// - Throws: ``StoreError``: `.readOnly` for a read-only store, `.diskFull` for SQLITE_FULL,
    ///   `.ioError` for SQLITE_IOERR. On any error nothing of the call is stored.
    @discardableResult
    public func write(_ records: [HealthRecord], checkpoints: [SourceCheckpoint] = []) async throws(StoreError) -> WriteSummary {
        try await requireWriter().perform { writer throws(StoreError) in try writer.write(records, checkpoints: checkpoints) }
    }

    /// Deletes the objects `selection` names, in one transaction, each leaving a tombstone in the
    /// change log. Refused, deleting nothing, when a running workout collects a selected sample.
    /// - Returns: the uuids and kinds deleted, by uuid; empty when nothing matched a range.
    /// - Throws: ``StoreError`` `.invalidArgument` for an unknown uuid or an empty range,
    ///   `.inUse` for a sample of a running workout, `.readOnly`, or the SQLite failure.
    public func delete(_ selection: DeletionSelection) async throws(StoreError) -> [(id: SampleID, kind: HealthRecordKind)] {
        try await requireWriter().perform { writer throws(StoreError) in try writer.delete(selection) }
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
