public import FoundationEssentials
import SQLite

/// One step of the store's background migration (the part of an upgrade that runs in bounded
/// batches after the store opened, ``HealthStore/migrateBatch(seriesLimit:linkLimit:)``): what it
/// is, how far it went, when it began and ended.
public struct StoreMigrationStep: Sendable, Hashable {
    /// `heartbeats` (beats moved into their series' blobs), `workout_samples` (a workout's
    /// links to its samples deleted: workouts find them by time and device) or `attribution`
    /// (the readings stored before version 18 given their person, schema version 19).
    public var name: String
    /// How many rows the step has to handle, counted when the upgrade began.
    public var total: Int
    /// How many it handled.
    public var done: Int
    /// Where the next batch resumes.
    var position: Int64
    /// The last anchor the step handles (the latest when it began); nil: no bound.
    var through: Int64?
    public var started: Date
    /// nil while it runs.
    public var finished: Date?
}

extension StoreMigrationStep {
    /// Every step of `store_migrations`, by name.
    static func all(in connection: SQLiteConnection) throws(SQLiteError) -> [StoreMigrationStep] {
        try connection.query("SELECT step, total, done, position, started_us, finished_us, through FROM store_migrations ORDER BY step")
            .compactMap { row in
                guard let name = row.text(0), let total = row.integer(1), let done = row.integer(2), let position = row.integer(3),
                    let started = row.integer(4)
                else { return nil }
                return StoreMigrationStep(
                    name: name, total: Int(total), done: Int(done), position: position, through: row.integer(6),
                    started: StoreTime.date(microseconds: started), finished: row.integer(5).map(StoreTime.date(microseconds:)))
            }
    }
}
