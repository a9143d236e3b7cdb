import HealthModel
import HealthStore
import SQLite

extension PreviousSchemaStore {
    /// Writes the class-hours of ``makeClassDays(path:days:straps:hours:beatsPerSeries:start:)``
    /// into a file whose straps are written: one transaction per class-hour, holding nothing in
    /// memory beyond one.
    struct ClassDaysWriter {
        private let connection: SQLiteConnection
        private let ids = SampleIDGenerator(seed: 57)
        private let straps: Int
        private let beatsPerSeries: Int
        private let sample: SQLiteStatement
        private let seriesRow: SQLiteStatement
        private let beatRow: SQLiteStatement
        private let workoutRow: SQLiteStatement
        private let statisticsRow: SQLiteStatement
        private let link: SQLiteStatement
        /// Each strap's beats of a minute, as it sends them.
        private let beats: [[Heartbeat]]
        /// What the class-hours written so far hold.
        private(set) var contents = Contents(heartbeatSeries: 0, workoutLinks: 0, workouts: 0)
        private var anchor: Int64 = 0

        init(connection: SQLiteConnection, straps: Int, beatsPerSeries: Int) throws {
            self.connection = connection
            self.straps = straps
            self.beatsPerSeries = beatsPerSeries
            sample = try connection.statement(
                "INSERT INTO samples (anchor, uuid, type_id, value, unit_id, start_us, duration_us, device_id) VALUES (?1, ?2, 1, ?3, 1, ?4, 0, ?5)")
            seriesRow = try connection.statement(
                "INSERT INTO heartbeat_series (anchor, uuid, start_us, end_us, beat_count, device_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            beatRow = try connection.statement(
                "INSERT INTO heartbeats (series_uuid, beat_index, time_since_start, preceded_by_gap) VALUES (?1, ?2, ?3, 0)")
            workoutRow = try connection.statement(
                """
                INSERT INTO workouts (anchor, uuid, activity_type, start_us, end_us, duration, metadata_set_id)
                VALUES (?1, ?2, 'highIntensityIntervalTraining', ?3, ?4, 3600, ?5)
                """)
            statisticsRow = try connection.statement(
                """
                INSERT INTO workout_statistics (owner_uuid, workout_uuid, type, start_us, end_us, sample_count, average, minimum,
                    maximum, most_recent, most_recent_us)
                VALUES (?1, ?1, 'heartRate', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                """)
            link = try connection.statement("INSERT INTO workout_samples (workout_uuid, sample_uuid) VALUES (?1, ?2)")
            beats = (0..<straps).map { StrapBeats.series(strap: $0, count: beatsPerSeries) }
        }

        /// Writes the one-hour class starting at `classStart` (µs since 1970) in one transaction:
        /// its samples and series, then each participant's workout.
        mutating func writeClass(from classStart: Int64) throws {
            // Each strap's samples and series of the hour, for its workout's links, and its values.
            var linked = [[[UInt8]]](repeating: [], count: straps)
            var values = [[Double]](repeating: [], count: straps)
            try connection.execute("BEGIN")
            for second in 0..<3600 {
                let at = classStart + Int64(second) * 1_000_000
                for strap in 0..<straps {
                    let id = ids.next().bytes
                    let value = Double(90 + (second + strap) % 80)
                    try sample.bind([.integer(nextAnchor()), .blob(id), .real(value), .integer(at), .integer(Int64(strap + 1))])
                    try sample.runAndReset()
                    linked[strap].append(id)
                    values[strap].append(value)
                }
                guard second % 60 == 59 else { continue }
                try writeSeries(from: at - 59_000_000, linked: &linked)
            }
            contents.samples += straps * 3600
            try writeWorkouts(from: classStart, linked: linked, values: values)
            try connection.run("UPDATE anchors SET latest = ?1", [.integer(anchor)])
            try connection.execute("COMMIT")
        }

        /// Writes each strap's heartbeat series of the minute from `seriesStart`, with its beats.
        private mutating func writeSeries(from seriesStart: Int64, linked: inout [[[UInt8]]]) throws {
            for strap in 0..<straps {
                let id = ids.next().bytes
                try seriesRow.bind([
                    .integer(nextAnchor()), .blob(id), .integer(seriesStart), .integer(seriesStart + 59_500_000),
                    .integer(Int64(beatsPerSeries)), .integer(Int64(strap + 1)),
                ])
                try seriesRow.runAndReset()
                for beat in 0..<beatsPerSeries {
                    try beatRow.bind([.blob(id), .integer(Int64(beat)), .real(beats[strap][beat].timeSinceSeriesStart)])
                    try beatRow.runAndReset()
                }
                linked[strap].append(id)
            }
            contents.heartbeatSeries += straps
            contents.beats += straps * beatsPerSeries
        }

        /// The class ends: each participant's workout, linked to what it collected.
        private mutating func writeWorkouts(from classStart: Int64, linked: [[[UInt8]]], values: [[Double]]) throws {
            let classEnd = classStart + 3_600_000_000
            for strap in 0..<straps {
                let workout = SQLiteValue.blob(ids.next().bytes)
                try workoutRow.bind([.integer(nextAnchor()), workout, .integer(classStart), .integer(classEnd), .integer(Int64(strap + 1))])
                try workoutRow.runAndReset()
                let own = values[strap]
                try statisticsRow.bind([
                    workout, .integer(classStart), .integer(classEnd), .integer(Int64(own.count)),
                    .real(own.reduce(0, +) / Double(own.count)), .real(own.min() ?? 0), .real(own.max() ?? 0),
                    .real(own.last ?? 0), .integer(classEnd - 1_000_000),
                ])
                try statisticsRow.runAndReset()
                for id in linked[strap] {
                    try link.bind([workout, .blob(id)])
                    try link.runAndReset()
                }
                contents.workoutLinks += linked[strap].count
                contents.workouts += 1
            }
        }

        /// The next anchor, counting from 1.
        private mutating func nextAnchor() -> Int64 {
            anchor += 1
            return anchor
        }
    }
}
