import GatewayTesting
import Foundation
import HealthModel
import SQLite
import HealthStore
import XCTest

/// Schema version 3: source checkpoints, committed in the same transaction as their records.
final class CheckpointStoreTests: StoreTestCase {
    private func checkpoint(_ key: String, _ value: String) -> SourceCheckpoint {
        SourceCheckpoint(namespace: "serial-pedometer", key: key, payload: Data(value.utf8))
    }

    func testAVersion2FileGainsTheCheckpointTableAndKeepsItsRecords() async throws {
        let ids = makeIDs()
        let connection = try SQLiteConnection(path: path)
        try connection.migrate(Array(StoreSchema.migrations.prefix(2)))
        XCTAssertEqual(try connection.userVersion, 2)
        // A read-only store does not upgrade a file: it says who does.
        XCTAssertThrowsError(try HealthStore(path: path, access: .readOnly)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .schemaTooOld, "\(error)")
        }

        // A version-2 writer's rows, then the upgrade.
        _ = try connection.run(
            "INSERT INTO samples (uuid, type, value, unit, original_value, start_us, end_us) VALUES (?1, 'HKQuantityTypeIdentifierStepCount', 5, 'count', 5, 0, 1000000)",
            [.blob(ids.next().bytes)])
        let writer = try HealthStore(path: path)
        let reader = writer
        XCTAssertGreaterThanOrEqual(try connection.userVersion, 3)
        XCTAssertEqual(try count("samples"), 1)
        XCTAssertEqual(try count("source_checkpoints"), 0)
        XCTAssertEqual(try sqlite3("PRAGMA integrity_check"), "ok")
        try await writer.write([], checkpoints: [checkpoint("SN", "1")])
        let stored = try await reader.checkpoint(namespace: "serial-pedometer", key: "SN")
        XCTAssertEqual(stored, checkpoint("SN", "1"))
    }

    func testCheckpointsCommitWithTheirRecordsAndTheLastOneWins() async throws {
        let ids = makeIDs()
        let writer = try HealthStore(path: path)
        try await writer.write(
            [.quantity(try steps(ids, 10, from: 0, to: 10))],
            checkpoints: [checkpoint("A", "10"), checkpoint("B", "1"), checkpoint("A", "20")])
        try await writer.write([], checkpoints: [checkpoint("", "")])
        let reader = writer
        let a = try await reader.checkpoint(namespace: "serial-pedometer", key: "A")
        XCTAssertEqual(a, checkpoint("A", "20"))
        let b = try await reader.checkpoint(namespace: "serial-pedometer", key: "B")
        XCTAssertEqual(b, checkpoint("B", "1"))
        let empty = try await reader.checkpoint(namespace: "serial-pedometer", key: "")
        XCTAssertEqual(empty?.payload, Data(), "an empty payload is stored as an empty BLOB")
        let otherNamespace = try await reader.checkpoint(namespace: "glucose", key: "A")
        XCTAssertNil(otherNamespace)
    }

    func testAFailedTransactionStoresNeitherRecordsNorCheckpoint() async throws {
        let ids = makeIDs()
        let writer = try HealthStore(path: path)
        try await writer.write([.quantity(try steps(ids, 1, from: 0, to: 1))], checkpoints: [checkpoint("A", "1")])
        let pages = try XCTUnwrap(Int(try sqlite3("PRAGMA page_count")))
        try await writer.setMaximumPageCount(pages)
        let many = try (0..<3000).map { HealthRecord.quantity(try steps(ids, 1, from: Double($0 + 1), to: Double($0 + 2))) }
        await XCTAssertThrowsErrorAsync({ try await writer.write(many, checkpoints: [checkpoint("A", "3001")]) }) { error in
            XCTAssertEqual((error as? StoreError)?.code, .diskFull, "\(error)")
        }
        XCTAssertEqual(try count("samples"), 1)
        let stored = try await writer.checkpoint(namespace: "serial-pedometer", key: "A")
        XCTAssertEqual(stored, checkpoint("A", "1"), "the checkpoint rolled back with its records")
        XCTAssertEqual(try sqlite3("PRAGMA integrity_check"), "ok")
    }

    func testAMissingFileIsNotFoundReadOnlyAndNothingIsCreated() async throws {
        let absent = directory.appendingPathComponent("absent.sqlite").path
        XCTAssertThrowsError(try HealthStore(path: absent, access: .readOnly)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .notFound, "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: absent))
    }
}
