public import Foundation
import HealthModel
import HealthStore
import SQLite

/// A store file as the release before quantity series wrote it (schema 14): heartbeat series
/// whose beats are rows of `heartbeats`, and a workout linked to its samples in
/// `workout_samples`, which the store's background migration moves and deletes after the upgrade.
/// Made with that schema's own migrations and rows in its shape.
public enum PreviousSchemaStore {
    /// The schema version the file has.
    public static let version = 14

    /// What a made file holds for the migration.
    public struct Contents: Sendable, Hashable {
        /// Heartbeat series with their beats in `heartbeats` (the `heartbeats` step's total).
        public var heartbeatSeries: Int
        /// Links of the workouts in `workout_samples` (the `workout_samples` step's total).
        public var workoutLinks: Int
        /// Heart-rate samples, each a row of `samples`.
        public var samples = 0
        /// Beats, each a row of `heartbeats`.
        public var beats = 0
        /// Workouts.
        public var workouts = 1

        public init(heartbeatSeries: Int, workoutLinks: Int, samples: Int = 0, beats: Int = 0, workouts: Int = 1) {
            self.heartbeatSeries = heartbeatSeries
            self.workoutLinks = workoutLinks
            self.samples = samples
            self.beats = beats
            self.workouts = workouts
        }
    }

    /// Writes the file at `path` (it must not exist): `heartbeatSeries` series of
    /// `beatsPerSeries` beats each, one a minute from `start`, and one workout over them linked to
    /// `workoutLinks` sample uuids (the samples themselves are not needed by the migration).
    @discardableResult
    public static func make(
        path: String, heartbeatSeries: Int, beatsPerSeries: Int = 3, workoutLinks: Int,
        start: Date = Date(timeIntervalSince1970: 1_800_000_000)
    ) throws -> Contents {
        let connection = try SQLiteConnection(path: path)
        try connection.migrate(Array(StoreSchema.migrations.prefix(version)))
        let startMicroseconds = Int64(start.timeIntervalSince1970 * 1_000_000)
        let ids = SampleIDGenerator(seed: 57)
        try connection.execute("BEGIN")
        var anchor: Int64 = 0
        for index in 0..<heartbeatSeries {
            anchor += 1
            let uuid = SQLiteValue.blob(ids.next().bytes)
            let seriesStart: Int64 = startMicroseconds + Int64(index) * 60_000_000
            let seriesEnd: Int64 = seriesStart + Int64(beatsPerSeries) * 1_000_000
            let row: [SQLiteValue] = [.integer(anchor), uuid, .integer(seriesStart), .integer(seriesEnd), .integer(Int64(beatsPerSeries))]
            try connection.run("INSERT INTO heartbeat_series (anchor, uuid, start_us, end_us, beat_count) VALUES (?1, ?2, ?3, ?4, ?5)", row)
            for beat in 0..<beatsPerSeries {
                try connection.run(
                    "INSERT INTO heartbeats (series_uuid, beat_index, time_since_start, preceded_by_gap) VALUES (?1, ?2, ?3, 0)",
                    [uuid, .integer(Int64(beat)), .real(Double(beat) * 0.8125)])
            }
        }
        anchor += 1
        let workout = SQLiteValue.blob(ids.next().bytes)
        let minutes = Int64(max(1, heartbeatSeries))
        let workoutEnd: Int64 = startMicroseconds + minutes * 60_000_000
        let workoutRow: [SQLiteValue] = [
            .integer(anchor), workout, .integer(startMicroseconds), .integer(workoutEnd), .real(Double(minutes * 60)),
        ]
        try connection.run(
            "INSERT INTO workouts (anchor, uuid, activity_type, start_us, end_us, duration) VALUES (?1, ?2, 'running', ?3, ?4, ?5)",
            workoutRow)
        for _ in 0..<workoutLinks {
            try connection.run(
                "INSERT INTO workout_samples (workout_uuid, sample_uuid) VALUES (?1, ?2)", [workout, .blob(ids.next().bytes)])
        }
        try connection.run("UPDATE anchors SET latest = ?1", [.integer(anchor)])
        try connection.execute("COMMIT")
        return Contents(heartbeatSeries: heartbeatSeries, workoutLinks: workoutLinks)
    }
}
