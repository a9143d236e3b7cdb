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
        try writeClassDayStraps(straps, connection)
        var writer = try ClassDaysWriter(connection: connection, straps: straps, beatsPerSeries: beatsPerSeries)
        let startMicroseconds = StoreTime.microseconds(start)
        for day in 0..<days {
            for hour in 0..<hours {
                try writer.writeClass(from: startMicroseconds + (Int64(day) * 86_400 + Int64(hour) * 3600) * 1_000_000)
            }
        }
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return writer.contents
    }

    /// Writes the straps of a class-day file, each participant's metadata set (its strap and
    /// its name) and the heart-rate vocabulary, in one transaction.
    private static func writeClassDayStraps(_ straps: Int, _ connection: SQLiteConnection) throws {
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
    }
}
