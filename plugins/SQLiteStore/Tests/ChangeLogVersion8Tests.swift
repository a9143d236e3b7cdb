import Foundation
import HealthModel
import SQLite
import SQLiteStore
import XCTest

/// Schema version 8: the change log without AUTOINCREMENT, one `INSERT OR REPLACE` per change.
/// A version-7 file keeps its anchors and tombstones, and anchors keep growing after the upgrade,
/// also when the object with the greatest anchor is deleted or stored again.
final class ChangeLogVersion8Tests: StoreTestCase {
    func hex(_ id: SampleID) -> String { id.bytes.map { String(format: "%02x", $0) }.joined() }

    func insertWithShell(_ sample: QuantitySample) throws {
        _ = try sqlite3("""
            INSERT INTO samples (uuid, type, value, unit, original_value, start_us, end_us)
            VALUES (x'\(hex(sample.id))', 'heartRate', \(sample.quantity.value), 'count/min',
                \(sample.quantity.value), \(SQLiteSampleWriter.microseconds(sample.startDate)),
                \(SQLiteSampleWriter.microseconds(sample.endDate)))
            """)
    }

    func deleteWithShell(_ id: SampleID) throws {
        XCTAssertEqual(try sqlite3("DELETE FROM samples WHERE uuid = x'\(hex(id))'; SELECT changes()"), "1")
    }

    func testAVersion7FileKeepsItsAnchorsAndTombstonesAndAnchorsKeepGrowing() async throws {
        let ids = makeIDs()
        let first = try heartRate(ids, 61, at: 0, device: nil)
        let second = try heartRate(ids, 62, at: 1, device: nil)
        let third = try heartRate(ids, 63, at: 2, device: nil)
        try SQLiteConnection(path: path).migrate(Array(StoreSchema.migrations.prefix(7)))
        for sample in [first, second, third] { try insertWithShell(sample) }
        try deleteWithShell(third.id)  // version 7's triggers: anchors 1, 2, 3, then the tombstone at 4
        XCTAssertEqual(try sqlite3("SELECT seq FROM sqlite_sequence WHERE name = 'changes'"), "4")

        let writer = try SQLiteSampleWriter(path: path)
        XCTAssertEqual(try sqlite3("PRAGMA user_version"), "8")
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM sqlite_sequence WHERE name = 'changes'"), "0")
        XCTAssertFalse(try sqlite3("SELECT sql FROM sqlite_schema WHERE name = 'changes'").contains("AUTOINCREMENT"))
        let store = try SQLiteSampleStore(path: path)
        let upgraded = try await store.changes(since: 0)
        XCTAssertEqual(upgraded.added.map(\.id), [first.id, second.id])
        XCTAssertEqual(upgraded.addedAnchors, [1, 2])
        XCTAssertEqual(upgraded.anchor, 4)
        let tombstones = try await store.changes(since: 2)
        XCTAssertEqual(tombstones.deleted.map(\.id), [third.id])
        XCTAssertEqual(tombstones.deleted.map(\.anchor), [4], "the tombstone keeps its anchor")

        // A new object, then the object with the greatest anchor deleted: each a new anchor.
        let fourth = try heartRate(ids, 64, at: 3, device: nil)
        try writer.write([.quantity(fourth)])
        try deleteWithShell(fourth.id)
        let afterDelete = try await store.changes(since: 4)
        XCTAssertEqual(afterDelete.added, [])
        XCTAssertEqual(afterDelete.deleted.map(\.id), [fourth.id])
        XCTAssertEqual(afterDelete.deleted.map(\.anchor), [6], "5 went to the insert; the tombstone moves above it")
        XCTAssertEqual(afterDelete.anchor, 6)

        // A deleted object stored again: its tombstone gives way to an added row with a new anchor.
        try writer.write([.quantity(fourth)])
        let again = try await store.changes(since: 0)
        XCTAssertEqual(again.added.map(\.id), [first.id, second.id, fourth.id])
        XCTAssertEqual(again.addedAnchors, [1, 2, 7])
        XCTAssertEqual(again.deleted.map(\.id), [third.id])
        XCTAssertEqual(again.anchor, 7)

        // Writing it once more changes nothing (the insert is a no-op, no trigger fires).
        try writer.write([.quantity(fourth)])
        let unchanged = try await store.changes(since: 7)
        XCTAssertEqual(unchanged.added, [])
        XCTAssertEqual(unchanged.anchor, 7)
    }
}
