import GatewayTesting
import Foundation
import HealthModel
import SQLite
import HealthStore
import XCTest

/// The change log: every stored object's anchor is its row's key, a deletion is a tombstone
/// with an anchor of its own, and `HealthStore.changes(since:type:limit:)` reads them.
final class ChangeLogTests: StoreTestCase {
    func hex(_ id: SampleID) -> String { id.bytes.map { String(format: "%02x", $0) }.joined() }

    /// Deletes an object through a store of its own, as `healthgate delete` does.
    func delete(_ id: SampleID) async throws {
        let deleted = try await HealthStore(path: path).delete(.ids([id]))
        XCTAssertEqual(deleted.map(\.id), [id])
    }

    /// The code of the error `body` throws, or nil when it succeeds.
    func code(_ body: () async throws(StoreError) -> StoreChanges) async -> StoreError.Code? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error.code
        }
    }

    func makeSeries(_ ids: SampleIDGenerator, at start: Double, beats: Int, version: Int64? = nil) throws -> HeartbeatSeriesSample {
        var metadata = Metadata()
        metadata.syncVersion = version
        return try HeartbeatSeriesSample(
            id: ids.next(), start: at(start), end: at(start + Double(beats)),
            beats: (0..<beats).map { Heartbeat(timeSinceSeriesStart: Double($0), precededByGap: false) },
            device: strap, metadata: metadata)
    }

    func testEveryKindGetsAnAnchorAndDeletionsAreTombstonesWithNewAnchors() async throws {
        let ids = makeIDs()
        let first = try plainReading(ids, 61, at: 0)
        let second = try plainReading(ids, 62, at: 1)
        let series = try makeSeries(ids, at: 2, beats: 3)
        let workout = Workout(id: ids.next(), activityType: .running, startDate: at(0), endDate: at(60), duration: 60)
        // A heart rate, folded into a quantity series: written once at the end of its transaction.
        let pulse = try heartRate(ids, 70, at: 3)
        let walk = try steps(ids, 100, from: 0, to: 60)
        let writer = try HealthStore(path: path)
        try await writer.write([.quantity(first), .quantity(second), .quantity(pulse), .heartbeatSeries(series), .workout(workout)])
        try await writer.write([.quantity(walk)])

        let store = try HealthStore(path: path, access: .readOnly)
        let all = try await store.changes(since: 0)
        XCTAssertEqual(all.added, [
            .quantity(first), .quantity(second), .heartbeatSeries(series), .workout(workout),
            .quantitySeries(try storedSeries([pulse])), .quantity(walk),
        ])
        XCTAssertEqual(all.addedAnchors, [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(all.deleted, [])
        XCTAssertEqual(all.anchor, 6)
        XCTAssertFalse(all.hasMore)
        let nothing = try await store.changes(since: all.anchor)
        XCTAssertEqual(nothing.added, [])
        XCTAssertEqual(nothing.anchor, 6, "no change keeps the anchor")

        try await delete(second.id)
        try await delete(workout.id)
        try await delete(pulse.id)
        let afterDelete = try await store.changes(since: all.anchor)
        XCTAssertEqual(afterDelete.added, [])
        XCTAssertEqual(afterDelete.deleted, [
            // The tombstone names the sample's device as remote sinks do (its local identifier);
            // a workout has none.
            StoreChanges.Deletion(
                id: second.id, kind: .quantity, type: "heartRateVariabilitySDNN", anchor: 7, device: "AA:BB:CC:DD:EE:FF"),
            StoreChanges.Deletion(id: workout.id, kind: .workout, type: "workout", anchor: 8),
            StoreChanges.Deletion(id: pulse.id, kind: .quantitySeries, type: "heartRate", anchor: 9, device: "AA:BB:CC:DD:EE:FF"),
        ])
        XCTAssertEqual(afterDelete.anchor, 9)
        // From scratch, a deleted object is gone and its tombstone is reported.
        let fromScratch = try await store.changes(since: 0)
        XCTAssertEqual(fromScratch.added, [.quantity(first), .heartbeatSeries(series), .quantity(walk)])
        XCTAssertEqual(fromScratch.addedAnchors, [1, 3, 6])
        XCTAssertEqual(fromScratch.deletedIDs, [second.id, workout.id, pulse.id])

        // Stored again after its deletion: added at a new anchor, the tombstone gone.
        try await writer.write([.quantity(second)])
        let again = try await store.changes(since: afterDelete.anchor)
        XCTAssertEqual(again.added, [.quantity(second)])
        XCTAssertEqual(again.addedAnchors, [10])
        XCTAssertEqual(again.deleted, [])
        let remaining = try await store.changes(since: 0)
        XCTAssertEqual(remaining.deletedIDs, [workout.id, pulse.id])
    }

    func testAnchorsKeepGrowingAcrossCloseAndReopenAndAfterTheLatestObjectIsDeleted() async throws {
        let ids = makeIDs()
        let first = try plainReading(ids, 61, at: 0)
        let second = try plainReading(ids, 62, at: 1)
        do {
            let writer = try HealthStore(path: path)
            try await writer.write([.quantity(first), .quantity(second)])
        }
        // The latest object deleted by another process while the gateway is down.
        try await delete(second.id)
        let third = try plainReading(ids, 63, at: 2)
        do {
            let writer = try HealthStore(path: path)
            try await writer.write([.quantity(third)])
        }
        let store = try HealthStore(path: path, access: .readOnly)
        let changes = try await store.changes(since: 2)
        XCTAssertEqual(changes.deleted.map(\.anchor), [3])
        XCTAssertEqual(changes.addedAnchors, [4], "an anchor is never handed out twice")
        XCTAssertEqual(changes.added, [.quantity(third)])
        XCTAssertEqual(changes.anchor, 4)
    }

    func testLimitPagesThroughChangesAndTypeFilters() async throws {
        let ids = makeIDs()
        let samples = try (0..<5).map { try plainReading(ids, 60 + Double($0), at: Double($0)) }
        let walk = try steps(ids, 100, from: 0, to: 60)
        let writer = try HealthStore(path: path)
        try await writer.write([.quantity(samples[0]), .quantity(samples[1]), .quantity(walk)] + samples[2...].map(HealthRecord.quantity))
        try await delete(samples[0].id)

        let store = try HealthStore(path: path, access: .readOnly)
        var anchor: Int64 = 0
        var pages: [[Int64]] = []
        var deleted: [SampleID] = []
        while true {
            let page = try await store.changes(since: anchor, type: .quantity(Self.plainType), limit: 2)
            pages.append(page.addedAnchors + page.deleted.map(\.anchor))
            deleted += page.deletedIDs
            XCTAssertTrue(page.added.allSatisfy { $0.id != walk.id }, "the type filter leaves steps out")
            anchor = page.anchor
            if !page.hasMore { break }
        }
        // The readings at anchors 2, 4, 5, 6 (reading 0's anchor 1 became the tombstone at 7); steps at 3.
        XCTAssertEqual(pages, [[2, 4], [5, 6], [7]])
        XCTAssertEqual(deleted, [samples[0].id])
        XCTAssertEqual(anchor, 7)
        let stepChanges = try await store.changes(since: 0, type: .quantity(.stepCount))
        XCTAssertEqual(stepChanges.added, [.quantity(walk)])
        XCTAssertEqual(stepChanges.anchor, 7, "the anchor covers the changes of other types too")
        let workouts = try await store.changes(since: 0, type: .workout)
        XCTAssertEqual(workouts.added, [])
        XCTAssertEqual(ChangeType.named("heartRate"), .quantity(.heartRate))
        XCTAssertEqual(ChangeType.named("bloodPressure"), .correlation(.bloodPressure))
        XCTAssertEqual(ChangeType.named("workout"), .workout)
        XCTAssertNil(ChangeType.named("heartRat"))
    }

    func testAGrowingSeriesAndASyncReplacementMoveToNewAnchors() async throws {
        let ids = makeIDs()
        let series = try makeSeries(ids, at: 0, beats: 2, version: 1)
        let grown = try HeartbeatSeriesSample(
            id: series.id, start: series.startDate, end: at(4),
            beats: (0..<4).map { Heartbeat(timeSinceSeriesStart: Double($0), precededByGap: false) },
            device: strap, metadata: { var metadata = Metadata(); metadata.syncVersion = 2; return metadata }())
        let original = Metadata().synced("pedometer/day/1", version: 1)
        let day = try QuantitySample(
            id: ids.next(), type: .stepCount, quantity: Quantity(100, .count), start: at(0), end: at(60), metadata: original)
        var corrected = original
        corrected.syncVersion = 2
        let correctedDay = try QuantitySample(
            id: ids.next(), type: .stepCount, quantity: Quantity(120, .count), start: at(0), end: at(60), metadata: corrected)
        let writer = try HealthStore(path: path)
        try await writer.write([.heartbeatSeries(series), .quantity(day)])
        let store = try HealthStore(path: path, access: .readOnly)
        let before = try await store.changes(since: 0)
        XCTAssertEqual(before.anchor, 2)

        try await writer.write([.heartbeatSeries(grown), .quantity(correctedDay)])
        let after = try await store.changes(since: before.anchor)
        XCTAssertEqual(after.added, [.heartbeatSeries(grown), .quantity(correctedDay)])
        XCTAssertEqual(after.addedAnchors, [3, 5])
        XCTAssertEqual(after.deleted, [StoreChanges.Deletion(id: day.id, kind: .quantity, type: "stepCount", anchor: 4)])
    }

    func testBadAnchorsAndLimitsAreTypedErrors() async throws {
        let ids = makeIDs()
        let first = try plainReading(ids, 61, at: 0)
        let second = try plainReading(ids, 62, at: 1)
        let writer = try HealthStore(path: path)
        try await writer.write([.quantity(first), .quantity(second)])
        let store = try HealthStore(path: path, access: .readOnly)
        let negative = await code { () throws(StoreError) in try await store.changes(since: -1) }
        XCTAssertEqual(negative, .invalidArgument)
        let zeroLimit = await code { () throws(StoreError) in try await store.changes(since: 0, limit: 0) }
        XCTAssertEqual(zeroLimit, .invalidArgument)
        let future = await code { () throws(StoreError) in try await store.changes(since: 3) }
        XCTAssertEqual(future, .unknownAnchor)

        // Tombstones purged: a client at anchor 2 missed a deletion; a new client (anchor 0) did not.
        try await delete(first.id)
        let third = try plainReading(ids, 63, at: 2)
        try await writer.write([.quantity(third)])
        let purgedWithin = try await writer.purgeTombstones(deletedBefore: Date().addingTimeInterval(-86_400))
        XCTAssertEqual(purgedWithin, 0, "kept within retention")
        let purgedAfter = try await writer.purgeTombstones(deletedBefore: Date().addingTimeInterval(86_400))
        XCTAssertEqual(purgedAfter, 1)
        let expired = await code { () throws(StoreError) in try await store.changes(since: 2) }
        XCTAssertEqual(expired, .anchorExpired)
        let fresh = try await store.changes(since: 0)
        XCTAssertEqual(fresh.added, [.quantity(second), .quantity(third)])
        XCTAssertEqual(fresh.deleted, [])
        let atPurged = try await store.changes(since: 3)
        XCTAssertEqual(atPurged.anchor, 4, "the purged anchor itself is still answered")

        // The latest anchor is kept apart from the tombstones, so purging the latest one does not
        // let an anchor be handed out twice.
        try await delete(third.id)
        let purgedLatest = try await writer.purgeTombstones(deletedBefore: Date().addingTimeInterval(86_400))
        XCTAssertEqual(purgedLatest, 1)
        try await writer.write([.quantity(try plainReading(ids, 64, at: 3))])
        let latest = try await store.changes(since: 5)
        XCTAssertEqual(latest.addedAnchors, [6])
    }

    func testAVersion6FileGetsAnchorsInUUIDOrder() async throws {
        let ids = makeIDs()
        let first = try heartRate(ids, 61, at: 0)
        let second = try heartRate(ids, 62, at: 1)
        try SQLiteConnection(path: path).migrate(Array(StoreSchema.migrations.prefix(6)))
        // Written in reverse order, as an import may.
        for sample in [second, first] {
            _ = try sqlite3("""
                INSERT INTO samples (uuid, type, value, unit, original_value, start_us, end_us)
                VALUES (x'\(hex(sample.id))', 'heartRate', \(sample.quantity.value), 'count/min',
                    \(sample.quantity.value), \(StoreTime.microseconds(sample.startDate)),
                    \(StoreTime.microseconds(sample.endDate)))
                """)
        }
        XCTAssertThrowsError(try HealthStore(path: path, access: .readOnly)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .schemaTooOld)
        }
        _ = try HealthStore(path: path)
        XCTAssertEqual(try sqlite3("PRAGMA user_version"), "\(StoreSchema.version)")
        let changes = try await HealthStore(path: path, access: .readOnly).changes(since: 0)
        XCTAssertEqual(changes.added.map(\.id), [first.id, second.id])
        XCTAssertEqual(changes.addedAnchors, [1, 2])
    }
}
