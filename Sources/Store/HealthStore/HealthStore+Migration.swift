import SQLite
import FoundationEssentials

extension HealthStore {
    /// One batch of the background migration (``StoreMigrationStep``), in ONE transaction on the
    /// writer's queue: up to `seriesLimit` heartbeat series' beats moved into their blobs, up
    /// to `linkLimit` of a workout's old links deleted, or the readings of `attributionWindow`
    /// anchors given their person. Ingest waits for one batch at most.
    /// - Returns: every step's progress after the batch; the migration is done when every step
    ///   has its `finished` date.
    /// - Throws: ``StoreError``; nothing of the batch is kept then, and the next call resumes.
    public func migrateBatch(
        seriesLimit: Int = HealthStore.migrationSeriesBatch, linkLimit: Int = HealthStore.migrationLinkBatch,
        attributionWindow: Int64 = HealthStore.migrationAttributionWindow
    ) async throws(StoreError) -> [StoreMigrationStep] {
        try await requireWriter().perform { writer throws(StoreError) in
            try writer.migrateBatch(seriesLimit: seriesLimit, linkLimit: linkLimit, attributionWindow: attributionWindow)
        }
    }

    /// The background migration's steps as the store holds them (empty for a store created at
    /// this version with nothing to move: its steps finish at the first batch).
    public func migrationSteps() async throws(StoreError) -> [StoreMigrationStep] {
        let path = self.path
        return try await read { connection throws(StoreError) in
            do throws(SQLiteError) {
                return try StoreMigrationStep.all(in: connection)
            } catch {
                throw StoreError(error, path: path)
            }
        }
    }

    /// Heartbeat series a migration batch moves: about 70 beats each, so a batch reads and
    /// deletes as many rows as a 1000-sample ingest batch writes, and ingest waits no longer.
    public static let migrationSeriesBatch = 20
    /// Old links a migration batch deletes.
    public static let migrationLinkBatch = 2000
    /// The anchors a batch of the `attribution` step looks at: about as many rows as an ingest
    /// batch of a busy class writes, whichever of the four tables they are in.
    public static let migrationAttributionWindow: Int64 = 5_000

}
