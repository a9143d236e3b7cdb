import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

final class WriterTests: StoreTestCase {
    func testSchemaIsVersionedAndInWALMode() async throws {
        _ = try HealthStore(path: path)
        XCTAssertEqual(try sqlite3("PRAGMA journal_mode"), "wal")
        XCTAssertEqual(try sqlite3("PRAGMA user_version"), String(StoreSchema.version))
        let tables = try sqlite3("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .split(separator: "\n").map(String.init)
        // A new store has none of the tables earlier versions kept beats and workout links in,
        // and nothing for the background migration to do.
        XCTAssertEqual(tables, [
            "anchors", "correlation_members", "correlations", "dead_letters", "devices", "erasures", "follower_batches", "followers",
            "heartbeat_series", "live_workout_events", "live_workouts", "log_commits", "metadata_entries",
            "metadata_sets", "participant_devices", "quantity_series", "quantity_types", "sample_sync", "samples",
            "source_checkpoints", "sqlite_sequence", "store_migrations", "tombstones", "units", "wear_intervals", "workout_activities",
            "workout_curves", "workout_events", "workout_statistics", "workouts",
        ])
        XCTAssertEqual(try sqlite3("SELECT step, total, done, finished_us IS NOT NULL FROM store_migrations ORDER BY step"),
                       "heartbeats|0|0|1\nworkout_samples|0|0|1")
        XCTAssertEqual(try sqlite3("PRAGMA application_id"), String(HealthStore.applicationID))
        // Opening again does not migrate twice.
        _ = try HealthStore(path: path)
        XCTAssertEqual(try sqlite3("PRAGMA user_version"), String(StoreSchema.version))
    }

    /// Closing finalizes every statement and closes every connection, readers first: SQLite
    /// folds the log in and removes the `-wal` and `-shm` files, and every later question is
    /// told that the store is closed.
    func testClosingLeavesNoWriteAheadLogAndRefusesLaterQuestions() async throws {
        let ids = makeIDs()
        let store = try HealthStore(path: path)
        try await store.write((0..<20).map { .quantity(try plainReading(ids, 60 + Double($0), at: Double($0))) })
        _ = try await store.samples(of: .heartRate)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + "-wal"))
        let error = await store.close()
        XCTAssertNil(error)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-shm"))
        XCTAssertEqual(try count("samples"), 20, "the log was folded into the file")
        do {
            _ = try await store.samples(of: .heartRate)
            XCTFail("a read after the close")
        } catch {
            XCTAssertEqual((error as? StoreError)?.code, .closed, "\(error)")
        }
        do {
            try await store.write([.quantity(try plainReading(ids, 61, at: 30))])
            XCTFail("a write after the close")
        } catch {
            XCTAssertEqual((error as? StoreError)?.code, .closed, "\(error)")
        }
    }

    func testColumnsHoldCanonicalValuesMicrosecondsAndUUIDBytes() async throws {
        let ids = makeIDs()
        // 0.09 s is 90 ms, the canonical unit of heart-rate variability.
        let sample = try plainReading(ids, 0.09, at: 10.25, unit: .second)
        try await HealthStore(path: path).write([.quantity(sample)])
        let row = try sqlite3(
            """
            SELECT s.anchor, lower(hex(s.uuid)), t.identifier, s.value, u.unit, s.original_value, s.start_us, s.duration_us
            FROM samples s JOIN quantity_types t ON t.id = s.type_id JOIN units u ON u.id = s.unit_id
            """)
        let hex = sample.id.uuidString.replacingOccurrences(of: "-", with: "")
        XCTAssertEqual(row, "1|\(hex)|heartRateVariabilitySDNN|90.0|s|0.09|1800057610250000|0")
        XCTAssertEqual(try sqlite3("SELECT length(uuid) FROM samples"), "16")
        XCTAssertEqual(try sqlite3("SELECT start, \"end\", type, unit, original_value FROM samples_readable"),
                       "2027-01-16T00:00:10.250Z|2027-01-16T00:00:10.250Z|heartRateVariabilitySDNN|s|0.09")
        // In the canonical unit, the value is stored once.
        try await HealthStore(path: path).write([.quantity(try plainReading(ids, 61, at: 11))])
        XCTAssertEqual(try sqlite3("SELECT typeof(original_value) FROM samples WHERE anchor = 2"), "null")
    }

    func testSameUUIDTwiceIsOneRow() async throws {
        let ids = makeIDs()
        let records = try (0..<5).map { HealthRecord.quantity(try plainReading(ids, 60 + Double($0), at: Double($0))) }
        let writer = try HealthStore(path: path)
        let first = try await writer.write(records)
        XCTAssertEqual(first.inserted, 5)
        let second = try await writer.write(records + records)
        XCTAssertEqual(second.inserted, 0)
        XCTAssertEqual(second.ignored, 10)
        XCTAssertEqual(try count("samples"), 5)
        // A new writer (a restarted sink) also finds them.
        let awaited21 = try await HealthStore(path: path).write(records).ignored
        XCTAssertEqual(awaited21, 5)
        XCTAssertEqual(try count("samples"), 5)
    }

    func testDevicesAreDeduplicatedByAllFields() async throws {
        let ids = makeIDs()
        var updated = strap
        updated.firmwareVersion = "3.2"
        try await HealthStore(path: path).write([
            .quantity(try heartRate(ids, 60, at: 0)), .quantity(try heartRate(ids, 61, at: 1)),
            .quantity(try heartRate(ids, 62, at: 2, device: updated)),
            .quantity(try heartRate(ids, 63, at: 3, device: nil)),
        ])
        XCTAssertEqual(try count("devices"), 2)
        XCTAssertEqual(try sqlite3("SELECT firmware_version FROM devices ORDER BY id"), "3.1\n3.2")
        // The same devices in a later transaction (cache and database agree).
        try await HealthStore(path: path).write([.quantity(try heartRate(ids, 64, at: 4, device: updated))])
        XCTAssertEqual(try count("devices"), 2)
    }

    func testHigherSyncVersionReplacesLowerOrEqualIsIgnored() async throws {
        let ids = makeIDs()
        func version(_ number: Int64, bpm: Double) throws -> HealthRecord {
            var metadata = Metadata().synced("watch-42", version: number)
            metadata[MetadataKey("healthgate.note")] = .string("v\(number)")
            return .quantity(try heartRate(ids, bpm, at: 5, metadata: metadata))
        }
        let writer = try HealthStore(path: path)
        let awaited22 = try await writer.write([version(1, bpm: 70)]).inserted
        XCTAssertEqual(awaited22, 1)
        let awaited23 = try await writer.write([version(2, bpm: 75)]).replaced
        XCTAssertEqual(awaited23, 1)
        let awaited24 = try await writer.write([version(1, bpm: 99)]).ignored
        XCTAssertEqual(awaited24, 1)  // lower
        let awaited25 = try await writer.write([version(2, bpm: 98)])
        XCTAssertEqual([awaited25.ignored, awaited25.refused], [0, 1])  // equal, saying something else: refused, aloud
        XCTAssertEqual(awaited25.refusedIdentifiers, ["watch-42"])
        let again = try await writer.write([version(2, bpm: 75)])
        XCTAssertEqual([again.ignored, again.refused], [1, 0])  // equal and the same: sent again
        // The same to 15 digits: a value an earlier release stored with a conversion's noise.
        let noisy = try await writer.write([version(2, bpm: 75.00000000000001)])
        XCTAssertEqual([noisy.ignored, noisy.refused], [1, 0])
        XCTAssertEqual(try count("samples"), 1)
        XCTAssertEqual(
            try sqlite3("SELECT s.value, y.sync_version FROM samples s JOIN sample_sync y ON y.anchor = s.anchor"), "75.0|2")
        // The sample points to the new version's set, which holds its sync keys. The replaced
        // version's set stays (a set may be shared), unused and harmless.
        XCTAssertEqual(
            try sqlite3("""
                SELECT e.value FROM samples s JOIN metadata_entries e ON e.set_id = s.metadata_set_id
                WHERE e.key = 'healthgate.note'
                """), "v2")
        XCTAssertEqual(try count("metadata_sets"), 2)

        let stored = try await HealthStore(path: path, access: .readOnly).samples(of: .heartRate)
        XCTAssertEqual(stored.count, 1)
        XCTAssertEqual(stored.first?.metadata.syncIdentifier, "watch-42")
        XCTAssertEqual(stored.first?.metadata.syncVersion, 2)
        XCTAssertEqual(stored.first?.metadata[MetadataKey("healthgate.note")], .string("v2"))
    }

    func testSampleRoundTripKeepsUnitDeviceAndTypedMetadata() async throws {
        let ids = makeIDs()
        var metadata = Metadata()
        metadata.heartRateSensorLocation = .chest
        metadata[MetadataKey("healthgate.battery")] = .integer(87)
        metadata[MetadataKey("healthgate.rssi")] = .double(-61.5)
        metadata[MetadataKey("healthgate.contact")] = .bool(true)
        let sample = try heartRate(ids, 1.25, at: 1, unit: try HealthUnit("count/s"), metadata: metadata)
        try await HealthStore(path: path).write([.quantity(sample)])
        let stored = try await HealthStore(path: path, access: .readOnly).samples(of: .heartRate)
        // A heart rate is a quantity of a series (named in its metadata), in the unit it was
        // recorded in, with its device and every metadata entry.
        XCTAssertEqual(stored, try storedQuantities([sample]))
        XCTAssertEqual(stored.first?.quantity, Quantity(1.25, try HealthUnit("count/s")))
        XCTAssertEqual(stored.first?.device, strap)
        XCTAssertEqual(stored.first?.metadata[.series], .string(sample.id.uuidString))
        XCTAssertEqual(stored.first?.canonicalValue, 75)
        XCTAssertEqual(
            try sqlite3("SELECT key, value_type, typeof(value) FROM metadata_entries ORDER BY key"),
            """
            healthgate.battery|integer|integer
            healthgate.contact|bool|integer
            healthgate.rssi|double|real
            heartRateSensorLocation|string|text
            """)
    }

    func testStoreErrorsAreTyped() async throws {
        do {
            _ = try HealthStore(path: path, access: .readOnly)
            XCTFail("opened a missing file")
        } catch {
            XCTAssertEqual(error.code, .notFound)
            XCTAssertTrue(error.description.contains(path))
        }
        // Another program's database: refused, read-only or read-write, and left as it was.
        XCTAssertEqual(try runProcess("/usr/bin/sqlite3", [path, "CREATE TABLE t (x)"]).status, 0)
        let foreign = try sqlite3(".dump")
        for access in [HealthStore.Access.readOnly, .readWrite] {
            XCTAssertThrowsError(try HealthStore(path: path, access: access), "\(access)") { error in
                XCTAssertEqual((error as? StoreError)?.code, .notAStore)
                XCTAssertTrue("\(error)".contains(path), "\(error)")
            }
        }
        XCTAssertEqual(try sqlite3(".dump"), foreign)
        try FileManager.default.removeItem(atPath: path)
        // A version beyond this program's, with healthgate's application id: a newer healthgate's.
        XCTAssertEqual(try runProcess(
            "/usr/bin/sqlite3", [path, "PRAGMA application_id = \(HealthStore.applicationID); PRAGMA user_version = 99"]).status, 0)
        for access in [HealthStore.Access.readOnly, .readWrite] {
            XCTAssertThrowsError(try HealthStore(path: path, access: access), "\(access)") { error in
                XCTAssertEqual((error as? StoreError)?.code, .schemaTooNew)
            }
        }
        XCTAssertEqual(try sqlite3("PRAGMA user_version"), "99")
        try FileManager.default.removeItem(atPath: path)
        // The same version without the application id: not ours.
        XCTAssertEqual(try runProcess("/usr/bin/sqlite3", [path, "PRAGMA user_version = 99"]).status, 0)
        XCTAssertThrowsError(try HealthStore(path: path)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .notAStore)
        }
        try FileManager.default.removeItem(atPath: path)
        // Not a database at all: refused, and not a byte of it changes.
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try HealthStore(path: path)) { error in
            let code = (error as? StoreError)?.code
            XCTAssertTrue(code == .corrupt || code == .notAStore, "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), garbage)
        try FileManager.default.removeItem(atPath: path)
        _ = try HealthStore(path: path)
        let store = try HealthStore(path: path, access: .readOnly)
        do {
            _ = try await store.statisticsCollection(of: .stepCount, from: t0, to: at(60), anchor: t0, interval: .zero)
            XCTFail("accepted a zero interval")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
        }
        do {
            _ = try await store.samples(of: .heartRate, limit: -1)
            XCTFail("accepted a negative limit")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
        }
    }
}
