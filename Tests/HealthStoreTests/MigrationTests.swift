import GatewayTesting
import Foundation
import HealthModel
import SQLite
import HealthStore
import Synchronization
import XCTest

/// Upgrading version-1 files, and the migration machinery of `SQLiteConnection.migrate`.
final class MigrationTests: StoreTestCase {
    /// The metadata of two version-1 samples: every value type, a double that needs 17 digits.
    let monitor: Metadata = [
        MetadataKey("healthgate.bleAddress"): .string("AA:BB:CC:DD:EE:FF"),
        MetadataKey("healthgate.batteryLevel"): .integer(87),
        MetadataKey("heartRateSensorLocation"): .string("chest"),
        MetadataKey("healthgate.rssi"): .double(0.1 + 0.2),
        MetadataKey("healthgate.contact"): .bool(true),
    ]

    /// Records as version 1 stored them, for ``makeVersion1File()``.
    struct Version1Records {
        var samples: [QuantitySample]
        var series: [HeartbeatSeriesSample]
        var workouts: [Workout]
    }

    /// A file at schema version 1 (its real migration) holding rows written with raw SQL in
    /// version 1's shape: metadata in `sample_metadata`, one row per entry and owner.
    func makeVersion1File() throws -> Version1Records {
        let ids = makeIDs()
        let connection = try SQLiteConnection(path: path)
        try connection.migrate(Array(StoreSchema.migrations.prefix(1)))
        XCTAssertEqual(try connection.userVersion, 1)

        let synced = ([MetadataKey("healthgate.note"): .string("ünïcödé ❤️ 𝄞")] as Metadata).synced("watch-1", version: 3)
        let samples = [
            try heartRate(ids, 72, at: 1, metadata: monitor),
            try heartRate(ids, 1.25, at: 2, unit: try HealthUnit("count/s"), metadata: monitor),
            try heartRate(ids, 80, at: 3, metadata: synced),
            try heartRate(ids, 81, at: 4, device: nil),
        ]
        let series = try HeartbeatSeriesSample(
            id: ids.next(), start: at(10), end: at(12),
            beats: [Heartbeat(timeSinceSeriesStart: 0, precededByGap: false),
                    Heartbeat(timeSinceSeriesStart: 0.8125, precededByGap: true)],
            device: strap, metadata: [MetadataKey("heartRateSensorLocation"): .string("chest")])
        var workoutMetadata: Metadata = [MetadataKey("healthgate.indoor"): .bool(false)]
        workoutMetadata.syncIdentifier = "run-1"
        workoutMetadata.syncVersion = 1
        let workout = Workout(
            id: ids.next(), activityType: .cycling, startDate: at(0), endDate: at(60), duration: 60,
            metadata: workoutMetadata)

        try connection.run(
            "INSERT INTO devices (id, name, manufacturer, model, firmware_version, local_identifier) VALUES (1, ?1, ?2, ?3, ?4, ?5)",
            [strap.name, strap.manufacturer, strap.model, strap.firmwareVersion, strap.localIdentifier]
                .map { .text($0 ?? "") })
        func metadataRows(_ metadata: Metadata, owner: SampleID) throws {
            try insertVersion1Metadata(metadata, owner: owner, into: connection)
        }
        for sample in samples {
            try connection.run(
                """
                INSERT INTO samples (uuid, type, value, unit, original_value, start_us, end_us, device_id,
                    sync_identifier, sync_version)
                VALUES (?1, 'heartRate', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                """,
                [.blob(sample.id.bytes), .real(sample.canonicalValue), .text(sample.quantity.unit.unitString),
                 .real(sample.quantity.value), .integer(StoreTime.microseconds(sample.startDate)),
                 .integer(StoreTime.microseconds(sample.endDate)), sample.device == nil ? .null : .integer(1),
                 sample.metadata.syncIdentifier.map(SQLiteValue.text) ?? .null,
                 sample.metadata.syncVersion.map(SQLiteValue.integer) ?? .null])
            try metadataRows(sample.metadata, owner: sample.id)
        }
        try connection.run(
            "INSERT INTO heartbeat_series (uuid, start_us, end_us, beat_count, device_id) VALUES (?1, ?2, ?3, 2, 1)",
            [.blob(series.id.bytes), .integer(StoreTime.microseconds(series.startDate)),
             .integer(StoreTime.microseconds(series.endDate))])
        for (index, beat) in series.beats.enumerated() {
            try connection.run(
                "INSERT INTO heartbeats (series_uuid, beat_index, time_since_start, preceded_by_gap) VALUES (?1, ?2, ?3, ?4)",
                [.blob(series.id.bytes), .integer(Int64(index)), .real(beat.timeSinceSeriesStart),
                 .integer(beat.precededByGap ? 1 : 0)])
        }
        try metadataRows(series.metadata, owner: series.id)
        try connection.run(
            """
            INSERT INTO workouts (uuid, activity_type, start_us, end_us, duration, sync_identifier, sync_version)
            VALUES (?1, 'cycling', ?2, ?3, 60, 'run-1', 1)
            """,
            [.blob(workout.id.bytes), .integer(StoreTime.microseconds(workout.startDate)),
             .integer(StoreTime.microseconds(workout.endDate))])
        try metadataRows(workout.metadata, owner: workout.id)
        // An entry whose owner is gone: version 1 never showed it.
        try connection.run(
            "INSERT INTO sample_metadata VALUES (?1, 'healthgate.lost', 'string', 'nobody reads me')",
            [.blob(ids.next().bytes)])
        return Version1Records(samples: samples, series: [series], workouts: [workout])
    }

    func testVersion1FileMigratesWithTheSameQueryResults() async throws {
        let written = try makeVersion1File()
        XCTAssertEqual(try count("sample_metadata"), 5 + 5 + 1 + 1 + 1 + 1)

        // A read-only store does not upgrade a file; the writer does, when it opens it.
        XCTAssertThrowsError(try HealthStore(path: path, access: .readOnly)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .schemaTooOld)
        }
        let writer = try HealthStore(path: path)
        XCTAssertEqual(try sqlite3("PRAGMA user_version"), String(StoreSchema.version))
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM sqlite_schema WHERE name = 'sample_metadata'"), "0")
        // The two monitor samples share a set; the synced sample, the series and the workout
        // have one each, and version 9 gave the synced sample a set with its sync keys. The
        // orphan entry is gone.
        XCTAssertEqual(try count("metadata_sets"), 5)
        XCTAssertEqual(try count("metadata_entries"), 5 + 1 + 1 + 1 + 3)
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM metadata_entries WHERE key = 'healthgate.lost'"), "0")
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM samples WHERE metadata_set_id IS NULL"), "1")
        XCTAssertEqual(try sqlite3("PRAGMA foreign_key_check"), "")
        XCTAssertEqual(try sqlite3("PRAGMA integrity_check"), "ok")
        XCTAssertEqual(
            try sqlite3("SELECT key, value_type, typeof(value) FROM metadata_readable WHERE record = 'sample' AND key LIKE 'healthgate.%' GROUP BY key ORDER BY key"),
            """
            healthgate.batteryLevel|integer|integer
            healthgate.bleAddress|string|text
            healthgate.contact|bool|integer
            healthgate.note|string|text
            healthgate.rssi|double|real
            """)

        // What version 1 held, read back exactly, by the writer's store and by a read-only one.
        for reader in [writer, try HealthStore(path: path, access: .readOnly)] {
            let samples = try await reader.samples(of: .heartRate)
            XCTAssertEqual(samples, written.samples)
            let newest = try await reader.mostRecentSample(of: .heartRate)
            XCTAssertEqual(newest, written.samples.last)
            let series = try await reader.heartbeatSeries()
            XCTAssertEqual(series, written.series)
            let workouts = try await reader.workouts()
            XCTAssertEqual(workouts, written.workouts)
            // Exact: the 17-digit double has the same bits.
            guard case .double(let rssi)? = samples.first?.metadata[MetadataKey("healthgate.rssi")] else {
                return XCTFail("rssi lost its type: \(String(describing: samples.first?.metadata))")
            }
            XCTAssertEqual(rssi.bitPattern, (0.1 + 0.2).bitPattern)
        }

        // The migrated sets are the writer's: writing the same entries again finds them.
        try await writer.write([.quantity(try heartRate(SampleIDGenerator(seed: 8, milliseconds: { 1_800_057_600_000 }), 90, at: 100, metadata: monitor))])
        XCTAssertEqual(try count("metadata_sets"), 5)
    }

    func testAFileAtTheCurrentVersionIsUntouched() async throws {
        let ids = makeIDs()
        try await HealthStore(path: path).write([.quantity(try heartRate(ids, 60, at: 0, metadata: monitor))])
        let before = try sqlite3(".dump")
        _ = try HealthStore(path: path)
        XCTAssertEqual(try sqlite3(".dump"), before)
        XCTAssertEqual(try sqlite3("PRAGMA user_version"), String(StoreSchema.version))
        // No step runs on a file at the last version.
        let runs = Mutex(0)
        try SQLiteConnection(path: path).migrate(
            [.sql("CREATE TABLE never_one (x)")]
                + (1..<StoreSchema.version).map { _ in .code { _ throws(SQLiteError) in runs.withLock { $0 += 1 } } })
        XCTAssertEqual(runs.withLock { $0 }, 0)
        XCTAssertEqual(try sqlite3(".dump"), before)
    }

    func testAFailingVersion2StepLeavesTheFileAtVersion1() async throws {
        _ = try makeVersion1File()
        // A row written by hand whose value is not of its type: the upgrade cannot keep it exactly.
        _ = try sqlite3("UPDATE sample_metadata SET value = 'eighty-seven' WHERE key = 'healthgate.batteryLevel'")
        let rows = try sqlite3("SELECT * FROM sample_metadata ORDER BY owner_uuid, key")
        do {
            _ = try HealthStore(path: path)
            XCTFail("migrated a file with an invalid metadata row")
        } catch {
            XCTAssertTrue(error.message.contains("healthgate.batteryLevel"), error.description)
            XCTAssertTrue(error.message.contains("sample_metadata"), error.description)
        }
        // Rolled back whole: version 1, its table and rows, none of version 2's tables or columns.
        XCTAssertEqual(try sqlite3("PRAGMA user_version"), "1")
        XCTAssertEqual(try sqlite3("SELECT * FROM sample_metadata ORDER BY owner_uuid, key"), rows)
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'metadata%'"), "0")
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM pragma_table_info('samples') WHERE name = 'metadata_set_id'"), "0")

        // Fixed by hand, the file upgrades.
        _ = try sqlite3("UPDATE sample_metadata SET value = 87 WHERE key = 'healthgate.batteryLevel'")
        _ = try HealthStore(path: path)
        XCTAssertEqual(try sqlite3("PRAGMA user_version"), String(StoreSchema.version))
        let samples = try await HealthStore(path: path, access: .readOnly).samples(of: .heartRate)
        XCTAssertEqual(samples.first?.metadata, monitor)
    }

    func testAFailingCodeStepIsRolledBackAndItsErrorPassesThrough() async throws {
        let connection = try SQLiteConnection(path: path)
        let migrations: [SQLiteMigration] = [
            .sql("CREATE TABLE first (x)"),
            .code { connection throws(SQLiteError) in
                try connection.execute("CREATE TABLE second (x); INSERT INTO first VALUES (1)")
                throw SQLiteError(.mismatch, message: "step two cannot finish", context: "test")
            },
        ]
        do {
            try connection.migrate(migrations)
            XCTFail("a failing step committed")
        } catch {
            XCTAssertEqual(SQLiteError.ResultCode(rawValue: error.code), .mismatch)
            XCTAssertEqual(error.message, "step two cannot finish")
        }
        XCTAssertEqual(try connection.userVersion, 1)
        XCTAssertEqual(try sqlite3("SELECT name FROM sqlite_schema"), "first")
        XCTAssertEqual(try count("first"), 0)
    }

    func testAFileNewerThanTheMigrationsIsRefusedByItsRefusalNotItsText() throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA user_version = 3")
        do {
            try connection.migrate(["CREATE TABLE first (x)", "CREATE TABLE second (x)"])
            XCTFail("migrated a file newer than the migrations")
        } catch {
            XCTAssertEqual(error.refusal, .schemaTooNew)
            XCTAssertEqual(error.primaryResultCode, .error)
        }
        XCTAssertEqual(try connection.userVersion, 3)
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM sqlite_schema"), "0")
    }
}

/// Writes `metadata`, but for its sync identifier and version, as schema version 1 kept it: a
/// typed `sample_metadata` row per key, owned by `owner`.
func insertVersion1Metadata(_ metadata: Metadata, owner: SampleID, into connection: SQLiteConnection) throws {
    for (key, value) in metadata where key != .syncIdentifier && key != .syncVersion {
        let (type, stored): (String, SQLiteValue) = switch value {
        case .string(let text): ("string", .text(text))
        case .integer(let number): ("integer", .integer(number))
        case .double(let number): ("double", .real(number))
        case .bool(let flag): ("bool", .integer(flag ? 1 : 0))
        }
        try connection.run(
            "INSERT INTO sample_metadata (owner_uuid, key, value_type, value) VALUES (?1, ?2, ?3, ?4)",
            [.blob(owner.bytes), .text(key.rawValue), .text(type), stored])
    }
}
