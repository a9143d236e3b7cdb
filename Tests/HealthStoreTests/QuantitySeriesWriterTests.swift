import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// The writer folds the readings of a type with a series policy into quantity series
/// (``HealthModel/QuantitySeriesPolicy/stream``: 60 s span, 10 s gap, 4096 quantities), on a
/// real SQLite file: which readings share a series, what a series' row holds, how it moves
/// through the change log as it grows, and when it closes.
final class QuantitySeriesWriterTests: StoreTestCase {
    /// Heart rates of ``strap`` at `seconds`, 60 + the index mod 80 bpm.
    func rates(_ ids: SampleIDGenerator, at seconds: [Double], device: Device? = StoreTestCase.strap) throws -> [QuantitySample] {
        try seconds.enumerated().map { index, second in try heartRate(ids, Double(60 + index % 80), at: second, device: device) }
    }

    /// The series of heart rate as a reader of the change log gets them, in anchor order.
    func series(_ store: HealthStore, since anchor: Int64 = 0) async throws -> [QuantitySeriesSample] {
        try await store.changes(since: anchor).added.compactMap { record in
            if case .quantitySeries(let series) = record { series } else { nil }
        }
    }

    // MARK: Folding

    func testASeriesSpansAtMostAMinuteFromItsFirstQuantitysStart() async throws {
        let ids = makeIDs()
        let readings = try rates(ids, at: (0..<200).map(Double.init))
        let store = try HealthStore(path: path)
        let summary = try await store.write(readings.map(HealthRecord.quantity))
        XCTAssertEqual(summary.inserted, 200)
        // 0 … 60 s (60 s from the first start is still in), 61 … 121, 122 … 182, 183 … 199.
        let stored = try await series(store)
        XCTAssertEqual(stored.map(\.count), [61, 61, 61, 17])
        XCTAssertEqual(stored.map(\.id), [readings[0], readings[61], readings[122], readings[183]].map(\.id))
        XCTAssertEqual(stored.map(\.isProvisional), [false, false, false, true], "the last is still open")
        XCTAssertEqual(stored.first, try storedSeries(Array(readings[0...60]), open: false))
        let all = try await store.samples(of: .heartRate)
        XCTAssertEqual(all.map(\.quantity), readings.map(\.quantity))
        XCTAssertEqual(all.map(\.startDate), readings.map(\.startDate))
        XCTAssertEqual(try count("samples"), 0, "no reading is a sample of its own")
    }

    func testAPauseLongerThanTenSecondsStartsAnotherSeries() async throws {
        let ids = makeIDs()
        // 10 s after the last reading still belongs; 10.5 s does not.
        let readings = try rates(ids, at: [0, 1, 11, 21.5, 22])
        let store = try HealthStore(path: path)
        try await store.write(readings.map(HealthRecord.quantity))
        let stored = try await series(store)
        XCTAssertEqual(stored, [
            try storedSeries(Array(readings[0...2]), open: false), try storedSeries(Array(readings[3...4])),
        ])
    }

    func testASeriesHoldsAtMost4096Quantities() async throws {
        let ids = makeIDs()
        // 100 readings a second: 4096 fill a series in 40.96 s, well within its minute.
        let readings = try rates(ids, at: (0..<5000).map { Double($0) / 100 })
        let store = try HealthStore(path: path)
        try await store.write(readings.map(HealthRecord.quantity))
        let stored = try await series(store)
        XCTAssertEqual(stored.map(\.count), [4096, 904])
        XCTAssertEqual(stored.last?.id, readings[4096].id)
        let all = try await store.samples(of: .heartRate)
        XCTAssertEqual(all.map(\.quantity.value), readings.map(\.quantity.value))
    }

    func testAnotherDeviceUnitOrMetadataMakesAnotherSeries() async throws {
        let ids = makeIDs()
        let other = Device(name: "TICKR", localIdentifier: "C0:FF:EE:00:00:03")
        var resting = Metadata()
        resting[MetadataKey("healthgate.note")] = .string("rest")
        var readings: [QuantitySample] = []
        for second in 0..<12 {
            let at = Double(second)
            readings.append(try heartRate(ids, 70, at: at))
            readings.append(try heartRate(ids, 80, at: at, device: other))
            readings.append(try heartRate(ids, 1.5, at: at, unit: try HealthUnit("count/s")))
            readings.append(try heartRate(ids, 90, at: at, metadata: resting))
            readings.append(try heartRate(ids, 75, at: at, device: nil))
        }
        let store = try HealthStore(path: path)
        try await store.write(readings.map(HealthRecord.quantity))
        let stored = try await series(store)
        XCTAssertEqual(Set(stored), Set(try (0..<5).map { kind in
            try storedSeries(stride(from: kind, to: readings.count, by: 5).map { readings[$0] })
        }))
        // One row each, pointing to its device, unit and metadata set.
        XCTAssertEqual(
            try sqlite3("""
                SELECT d.name, u.unit, q.metadata_set_id IS NOT NULL, q.count FROM quantity_series q
                JOIN units u ON u.id = q.unit_id LEFT JOIN devices d ON d.id = q.device_id ORDER BY q.anchor
                """).split(separator: "\n").map(String.init).sorted(),
            ["Polar H10|count/min|0|12", "Polar H10|count/min|1|12", "Polar H10|count/s|0|12", "TICKR|count/min|0|12", "|count/min|0|12"]
                .sorted())
    }

    func testARowHoldsTheSummaryInTheCanonicalUnitAndTheQuantitiesAsRecorded() async throws {
        let ids = makeIDs()
        // 1.5, 2 and 1.25 count/s: 90, 120 and 75 count/min.
        let readings = try [1.5, 2, 1.25].enumerated().map { index, value in
            try heartRate(ids, value, at: Double(index), unit: try HealthUnit("count/s"))
        }
        try await HealthStore(path: path).write(readings.map(HealthRecord.quantity))
        XCTAssertEqual(
            try sqlite3("""
                SELECT count, sum, minimum, maximum, last_value, start_us, last_start_us, end_us, open, version
                FROM quantity_series
                """),
            "3|285.0|75.0|120.0|75.0|1800057600000000|1800057602000000|1800057602000000|1|1")
        XCTAssertEqual(
            try sqlite3("SELECT type, unit, count, average, device, open, version FROM quantity_series_readable"),
            "heartRate|count/s|3|95.0|Polar H10|1|1")
        let stored = try await HealthStore(path: path, access: .readOnly).samples(of: .heartRate)
        XCTAssertEqual(stored, try storedQuantities(readings))
        XCTAssertEqual(stored.map(\.canonicalValue), [90, 120, 75])
    }

    func testAReadingDeliveredTwiceIsIgnoredAndABatchWrittenAgainChangesNothing() async throws {
        let ids = makeIDs()
        let readings = try rates(ids, at: (0..<20).map(Double.init))
        let store = try HealthStore(path: path)
        try await store.write(Array(readings[0..<10]).map(HealthRecord.quantity))
        // The last reading again, in the next batch with the rest.
        let again = try await store.write(Array(readings[9..<20]).map(HealthRecord.quantity))
        XCTAssertEqual(again.ignored, 1)
        XCTAssertEqual(again.inserted, 10)
        // Every reading again, the open series holding them.
        let whole = try await store.write(readings.map(HealthRecord.quantity))
        XCTAssertEqual(whole.ignored, 20)
        await store.close()
        // And after the series closed, in another store (a restarted gateway).
        let reopened = try HealthStore(path: path)
        let later = try await reopened.write(readings.map(HealthRecord.quantity))
        XCTAssertEqual(later.ignored, 20)
        XCTAssertEqual(try count("samples"), 0)
        XCTAssertEqual(try count("quantity_series"), 1)
        let stored = try await reopened.samples(of: .heartRate)
        XCTAssertEqual(stored, try storedQuantities(readings))
    }

    func testALateReadingIsASampleOfItsOwnAndOnceOnly() async throws {
        let ids = makeIDs()
        let readings = try rates(ids, at: [10, 11, 12])
        let late = try heartRate(ids, 99, at: 5)
        let store = try HealthStore(path: path)
        try await store.write(readings.map(HealthRecord.quantity))
        let summary = try await store.write([.quantity(late)])
        XCTAssertEqual(summary.inserted, 1)
        let twice = try await store.write([.quantity(late)])
        XCTAssertEqual(twice.ignored, 1)
        XCTAssertEqual(try count("samples"), 1)
        let stored = try await store.samples(of: .heartRate)
        XCTAssertEqual(stored, [late] + (try storedQuantities(readings)))
        // A reading between the series' quantities, late too.
        let between = try heartRate(ids, 98, at: 11.5)
        try await store.write([.quantity(between)])
        let all = try await store.samples(of: .heartRate)
        XCTAssertEqual(all.map(\.startDate), [at(5), at(10), at(11), at(11.5), at(12)])
        XCTAssertEqual(all[3], between)
        // Written again once no series is open (as a reading stored as a sample before the store
        // kept series, written again by an import): a sample stored already, not a new series.
        await store.close()
        let reopened = try HealthStore(path: path)
        let again = try await reopened.write([.quantity(late), .quantity(between)])
        XCTAssertEqual(again.ignored, 2)
        XCTAssertEqual(try count("samples"), 2)
        XCTAssertEqual(try count("quantity_series"), 1)
    }

    func testAReadingWithASyncIdentifierIsASampleOfItsOwn() async throws {
        let ids = makeIDs()
        let metadata = Metadata().synced("watch-1", version: 1)
        let synced = try heartRate(ids, 70, at: 1, metadata: metadata)
        let plain = try rates(ids, at: [0, 2])
        let store = try HealthStore(path: path)
        try await store.write([.quantity(plain[0]), .quantity(synced), .quantity(plain[1])])
        XCTAssertEqual(try count("samples"), 1)
        let stored = try await store.samples(of: .heartRate)
        XCTAssertEqual(stored, [try storedQuantities(plain)[0], synced, try storedQuantities(plain)[1]])
    }

    func testATypeWithoutAPolicyIsNeverFolded() async throws {
        let ids = makeIDs()
        let readings = try (0..<10).map { try plainReading(ids, 40, at: Double($0)) }
        try await HealthStore(path: path).write(readings.map(HealthRecord.quantity))
        XCTAssertEqual(try count("samples"), 10)
        XCTAssertEqual(try count("quantity_series"), 0)
    }

    // MARK: Versions in the change log

    func testEachTransactionWritesEachSeriesItChangedOnceAtANewAnchorAndTheNextVersion() async throws {
        let ids = makeIDs()
        let readings = try rates(ids, at: (0..<9).map(Double.init))
        let store = try HealthStore(path: path)
        var anchors: [Int64] = []
        for batch in 0..<3 {
            let before = try await store.latestAnchor()
            try await store.write(readings[(batch * 3)..<(batch * 3 + 3)].map(HealthRecord.quantity))
            let changes = try await store.changes(since: before)
            // One object per transaction, however many readings it added.
            XCTAssertEqual(changes.added, [.quantitySeries(try storedSeries(Array(readings[0..<(batch * 3 + 3)]), version: Int64(batch + 1)))])
            XCTAssertEqual(changes.deleted, [])
            anchors += changes.addedAnchors
        }
        XCTAssertEqual(anchors, [1, 2, 3], "the series moves to a new anchor with each version")
        XCTAssertEqual(try count("quantity_series"), 1)
        // From scratch, the series once, in its latest version.
        let all = try await series(store)
        XCTAssertEqual(all, [try storedSeries(readings, version: 3)])
        XCTAssertEqual(all.first?.metadata.syncIdentifier, "quantity-series:\(readings[0].id.uuidString)")
        XCTAssertTrue(all.first?.isProvisional ?? false)

        // Closed with the store: the next version, not provisional.
        await store.close()
        let closed = try await series(try HealthStore(path: path, access: .readOnly), since: 3)
        XCTAssertEqual(closed, [try storedSeries(readings, version: 4, open: false)])
    }

    func testTwoSeriesChangedInOneTransactionTakeOneAnchorEach() async throws {
        let ids = makeIDs()
        let other = Device(name: "TICKR", localIdentifier: "C0:FF:EE:00:00:03")
        let store = try HealthStore(path: path)
        // 0 … 70 s: the strap's first series closes at 61 s and another begins; the other strap's grows.
        let mine = try rates(ids, at: (0..<71).map(Double.init))
        let theirs = try rates(ids, at: (0..<71).map(Double.init), device: other)
        try await store.write(Array(mine[0..<50]).map(HealthRecord.quantity) + Array(theirs[0..<50]).map(HealthRecord.quantity))
        let summary = try await store.write(Array(mine[50...]).map(HealthRecord.quantity) + Array(theirs[50...]).map(HealthRecord.quantity))
        XCTAssertEqual(summary.latestAnchor, 2 + 4, "the closed, the new and the other strap's two")
        let changes = try await store.changes(since: 2)
        XCTAssertEqual(changes.addedAnchors, [3, 4, 5, 6])
        XCTAssertEqual(Set(changes.added.map(\.id)), [mine[0].id, mine[61].id, theirs[0].id, theirs[61].id])
    }

    /// Issue 64: the open series' rows move to the table's end at every commit. A class of 30
    /// straps committed every 2 s for 30 minutes leaves the table's leaf pages at least 70 %
    /// full (74 % here; moved one row at a time, each left a hole the inserts never reached
    /// again: 64 %, and less the longer the class).
    func testGrowingSeriesLeaveTheirTablesPagesFull() async throws {
        let ids = makeIDs()
        let straps = (0..<30).map { Device(name: "Strap \($0)", localIdentifier: String(format: "C0:FF:EE:00:01:%02X", $0)) }
        let store = try HealthStore(path: path)
        for commit in 0..<900 {
            // Each strap began at an instant of its own: its series close at scattered instants.
            let batch = try straps.enumerated().flatMap { index, strap in
                try rates(ids, at: [0, 1].map { Double(commit * 2 + $0) + Double(index) * 1.9 }, device: strap)
            }
            try await store.write(batch.map(HealthRecord.quantity))
        }
        let closing = await store.close()
        XCTAssertNil(closing)
        let filled = try leafPagesFilled("quantity_series")
        XCTAssertGreaterThanOrEqual(filled, 70, "the leaf pages are \(filled) % full")
    }

    // MARK: Closing

    func testASeriesIdleForItsGapOnTheMonotonicClockIsClosed() async throws {
        let ids = makeIDs()
        let clock = ManualClock()
        let store = try HealthStore(path: path, uptime: { clock.uptime() })
        let readings = try rates(ids, at: [0, 1, 2])
        try await store.write(readings.map(HealthRecord.quantity))
        clock.advance(by: .seconds(9))
        let early = try await store.closeIdleSeries()
        XCTAssertEqual(early, 0, "9 s without a reading: still open")
        XCTAssertEqual(try sqlite3("SELECT open, version FROM quantity_series"), "1|1")
        clock.advance(by: .seconds(1))
        let closed = try await store.closeIdleSeries()
        XCTAssertEqual(closed, 1)
        let stored = try await series(store)
        XCTAssertEqual(stored, [try storedSeries(readings, version: 2, open: false)])
        let again = try await store.closeIdleSeries()
        XCTAssertEqual(again, 0)

        // The next reading of the strap starts another series, whatever its date.
        let next = try heartRate(ids, 70, at: 3)
        try await store.write([.quantity(next)])
        let after = try await series(store)
        XCTAssertEqual(after.map(\.id), [readings[0].id, next.id])

        // A write of anything closes what went idle meanwhile, in its own transaction.
        clock.advance(by: .seconds(10))
        try await store.write([.quantity(try plainReading(ids, 40, at: 20))])
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM quantity_series WHERE open = 1"), "0")
    }

    func testClosingTheStoreClosesOnlyTheSeriesItsWriterGrew() async throws {
        let ids = makeIDs()
        let daemon = try HealthStore(path: path)
        let readings = try rates(ids, at: [0, 1, 2])
        try await daemon.write(readings.map(HealthRecord.quantity))
        // A second process opens the file read-write (`healthgate delete`), writes its own, closes.
        let other = Device(name: "TICKR", localIdentifier: "C0:FF:EE:00:00:03")
        let command = try HealthStore(path: path)
        let own = try rates(ids, at: [0, 1], device: other)
        try await command.write(own.map(HealthRecord.quantity))
        let closeError = await command.close()
        XCTAssertNil(closeError)
        XCTAssertEqual(
            try sqlite3("SELECT d.name, q.open, q.version FROM quantity_series q JOIN devices d ON d.id = q.device_id ORDER BY q.anchor"),
            "Polar H10|1|1\nTICKR|0|2", "the daemon's series stays open")
        // The daemon goes on adding to its series, then closes it.
        let more = try heartRate(ids, 80, at: 3)
        try await daemon.write([.quantity(more)])
        await daemon.close()
        let stored = try await series(try HealthStore(path: path, access: .readOnly))
        XCTAssertEqual(Set(stored), [try storedSeries(readings + [more], version: 3, open: false), try storedSeries(own, version: 2, open: false)])
    }

    func testARolledBackTransactionLeavesTheOpenSeriesAsCommitted() async throws {
        let ids = makeIDs()
        let store = try HealthStore(path: path)
        let committed = try rates(ids, at: (0..<10).map(Double.init))
        try await store.write(committed.map(HealthRecord.quantity))
        // The file at its size limit: a batch with a thousand samples of their own does not fit.
        let pages = Int(try sqlite3("PRAGMA page_count")) ?? 0
        try await store.setMaximumPageCount(pages)
        let grown = try rates(ids, at: (10..<20).map(Double.init))
        let bulky = try (0..<1000).map { index in
            try plainReading(ids, 40, at: Double(index), metadata: [MetadataKey("healthgate.note"): .string(String(repeating: "x", count: 200) + "\(index)")])
        }
        do {
            try await store.write(grown.map(HealthRecord.quantity) + bulky.map(HealthRecord.quantity))
            XCTFail("the batch fitted")
        } catch {
            XCTAssertEqual(error.code, .diskFull, error.description)
        }
        XCTAssertEqual(try sqlite3("SELECT count, version, open FROM quantity_series"), "10|1|1")
        try await store.setMaximumPageCount(nil)
        // The first reading of the failed batch alone adds to the series as it was committed:
        // version 2, eleven quantities.
        let next = try heartRate(ids, grown[0].quantity.value, at: 10)
        try await store.write([.quantity(next)])
        let stored = try await series(store)
        XCTAssertEqual(stored, [try storedSeries(committed + [next], version: 2)])
        // The failed batch again: its first reading is the one stored, the rest join, nothing twice.
        try await store.write(grown.map(HealthRecord.quantity) + bulky.map(HealthRecord.quantity))
        let rates = try await store.samples(of: .heartRate)
        XCTAssertEqual(rates.map(\.startDate), (0..<20).map { at(Double($0)) })
        XCTAssertEqual(rates.map(\.quantity.value), (committed + [next] + grown[1...]).map(\.quantity.value))
    }

    func testAnOpenSeriesDeletedByAnotherProcessIsNotResurrected() async throws {
        let ids = makeIDs()
        let clock = ManualClock()
        let daemon = try HealthStore(path: path, uptime: { clock.uptime() })
        let first = try rates(ids, at: [0, 1, 2])
        try await daemon.write(first.map(HealthRecord.quantity))
        // `healthgate delete --id` in another process, while the daemon runs.
        let deleted = try await HealthStore(path: path).delete(.ids([first[0].id]))
        XCTAssertEqual(deleted.map(\.kind), [.quantitySeries])
        let next = try rates(ids, at: [3, 4])
        try await daemon.write(next.map(HealthRecord.quantity))
        clock.advance(by: .seconds(10))
        try await daemon.closeIdleSeries()
        await daemon.close()
        let store = try HealthStore(path: path, access: .readOnly)
        let changes = try await store.changes(since: 0)
        XCTAssertEqual(changes.added, [.quantitySeries(try storedSeries(next, version: 2, open: false))])
        XCTAssertEqual(changes.deleted.map(\.id), [first[0].id], "the tombstone stays")
        let rates = try await store.samples(of: .heartRate)
        XCTAssertEqual(rates, try storedQuantities(next))
    }

    func testAJournalThatPrunesWhatFollowersAcknowledgedKeepsAnOpenSeries() async throws {
        let ids = makeIDs()
        let store = try HealthStore(path: path)
        try await store.setRetention(.untilAcknowledged)
        _ = try await store.registerFollower("broker", startingAt: .beginning)
        let readings = try rates(ids, at: [0, 1, 2])
        try await store.write(readings.map(HealthRecord.quantity) + [.quantity(try plainReading(ids, 40, at: 0))])
        try await store.acknowledge(follower: "broker", through: try await store.latestAnchor())
        XCTAssertEqual(try count("samples"), 0, "the acknowledged sample went")
        XCTAssertEqual(try count("quantity_series"), 1, "the open series stays: it still grows")
        await store.close()
        let reopened = try HealthStore(path: path)
        try await reopened.setRetention(.untilAcknowledged)
        try await reopened.acknowledge(follower: "broker", through: try await reopened.latestAnchor())
        XCTAssertEqual(try count("quantity_series"), 0, "closed and acknowledged, it goes")
    }
}
