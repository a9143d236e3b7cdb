public import Foundation
import HealthModel
import HealthStore
import SQLite

extension PreviousSchemaStore {
    /// Writes `days` gym class-days at `path` (it must not exist), as the release before quantity
    /// series stored them, with that schema's own migrations: from `start`, each day `hours`
    /// one-hour classes of `straps` participants each wearing one strap; each strap's heart rate a
    /// sample a second (a row of `samples`), its beats a heartbeat series a minute (a row of
    /// `heartbeat_series`, `beatsPerSeries` rows of `heartbeats`), and per class and strap a
    /// workout naming its strap in `healthgate.devices` with its heart-rate statistics, linked in
    /// `workout_samples` to each of its hour's samples and series. Days follow each other 24 h
    /// apart. One transaction per class-hour, and nothing held in memory beyond one: a class-week
    /// is 9 million samples, 10.6 million beats and 9.2 million links.
    @discardableResult
    public static func makeClassDays(
        path: String, days: Int, straps: Int = 30, hours: Int = 12, beatsPerSeries: Int = 70,
        start: Date = Date(timeIntervalSince1970: 1_800_057_600)
    ) throws -> Contents {
        let connection = try SQLiteConnection(path: path)
        try connection.migrate(Array(StoreSchema.migrations.prefix(version)))
        let ids = SampleIDGenerator(seed: 57)
        try connection.execute("BEGIN")
        let device = try connection.statement(
            "INSERT INTO devices (id, name, manufacturer, model, local_identifier) VALUES (?1, ?2, 'Polar Electro Oy', 'H10', ?3)")
        // A participant's workouts share their metadata set: its strap and its name.
        let metadataSet = try connection.statement("INSERT INTO metadata_sets (id, canonical) VALUES (?1, ?2)")
        let metadataEntry = try connection.statement(
            "INSERT INTO metadata_entries (set_id, key, value_type, value) VALUES (?1, ?2, 'string', ?3)")
        for strap in 0..<straps {
            let address = String(format: "A0:9E:1A:00:00:%02X", strap)
            try device.bind([.integer(Int64(strap + 1)), .text("Polar H10 \(String(format: "%08X", 0x1A2B_0000 + strap))"), .text(address)])
            try device.runAndReset()
            let metadata: Metadata = [.workoutDevices: .string(address), .participant: .string("P\(strap + 1)")]
            try metadataSet.bind([.integer(Int64(strap + 1)), .blob(StoreSchema.canonicalEncoding(of: metadata))])
            try metadataSet.runAndReset()
            for (key, value) in metadata.values {
                guard case .string(let text) = value else { continue }
                try metadataEntry.bind([.integer(Int64(strap + 1)), .text(key.rawValue), .text(text)])
                try metadataEntry.runAndReset()
            }
        }
        try connection.execute("""
            INSERT INTO quantity_types (id, identifier, max_duration_us) VALUES (1, 'heartRate', 0);
            INSERT INTO units (id, unit) VALUES (1, 'count/min');
            COMMIT
            """)

        let sample = try connection.statement(
            "INSERT INTO samples (anchor, uuid, type_id, value, unit_id, start_us, duration_us, device_id) VALUES (?1, ?2, 1, ?3, 1, ?4, 0, ?5)")
        let seriesRow = try connection.statement(
            "INSERT INTO heartbeat_series (anchor, uuid, start_us, end_us, beat_count, device_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        let beatRow = try connection.statement(
            "INSERT INTO heartbeats (series_uuid, beat_index, time_since_start, preceded_by_gap) VALUES (?1, ?2, ?3, 0)")
        let workoutRow = try connection.statement(
            """
            INSERT INTO workouts (anchor, uuid, activity_type, start_us, end_us, duration, metadata_set_id)
            VALUES (?1, ?2, 'highIntensityIntervalTraining', ?3, ?4, 3600, ?5)
            """)
        let statisticsRow = try connection.statement(
            """
            INSERT INTO workout_statistics (owner_uuid, workout_uuid, type, start_us, end_us, sample_count, average, minimum,
                maximum, most_recent, most_recent_us)
            VALUES (?1, ?1, 'heartRate', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            """)
        let link = try connection.statement("INSERT INTO workout_samples (workout_uuid, sample_uuid) VALUES (?1, ?2)")
        // Each strap's beats of a minute, as it sends them.
        let beats = (0..<straps).map { StrapBeats.series(strap: $0, count: beatsPerSeries) }
        var contents = Contents(heartbeatSeries: 0, workoutLinks: 0, workouts: 0)
        var anchor: Int64 = 0
        func next() -> Int64 {
            anchor += 1
            return anchor
        }
        let startMicroseconds = StoreTime.microseconds(start)
        for day in 0..<days {
            for hour in 0..<hours {
                let classStart = startMicroseconds + (Int64(day) * 86_400 + Int64(hour) * 3600) * 1_000_000
                // Each strap's samples and series of the hour, for its workout's links, and its values.
                var linked = [[[UInt8]]](repeating: [], count: straps)
                var values = [[Double]](repeating: [], count: straps)
                try connection.execute("BEGIN")
                for second in 0..<3600 {
                    let at = classStart + Int64(second) * 1_000_000
                    for strap in 0..<straps {
                        let id = ids.next().bytes
                        let value = Double(90 + (second + strap) % 80)
                        try sample.bind([.integer(next()), .blob(id), .real(value), .integer(at), .integer(Int64(strap + 1))])
                        try sample.runAndReset()
                        linked[strap].append(id)
                        values[strap].append(value)
                    }
                    guard second % 60 == 59 else { continue }
                    let seriesStart = at - 59_000_000
                    for strap in 0..<straps {
                        let id = ids.next().bytes
                        try seriesRow.bind([
                            .integer(next()), .blob(id), .integer(seriesStart), .integer(seriesStart + 59_500_000),
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
                contents.samples += straps * 3600
                // The class ends: each participant's workout, linked to what it collected.
                let classEnd = classStart + 3_600_000_000
                for strap in 0..<straps {
                    let workout = SQLiteValue.blob(ids.next().bytes)
                    try workoutRow.bind([.integer(next()), workout, .integer(classStart), .integer(classEnd), .integer(Int64(strap + 1))])
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
                try connection.run("UPDATE anchors SET latest = ?1", [.integer(anchor)])
                try connection.execute("COMMIT")
            }
        }
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return contents
    }
}
