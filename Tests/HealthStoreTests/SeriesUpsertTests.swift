import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// A heartbeat series published as it grows: versions with one uuid and rising sync versions
/// extend the stored series in place.
final class SeriesUpsertTests: StoreTestCase {
    private func version(
        _ id: SampleID, _ version: Int64?, beats count: Int, start: Double = 0, provisional: Bool = true
    ) throws -> HealthRecord {
        var metadata = Metadata()
        metadata.syncIdentifier = "heartbeat-series:test"
        metadata.syncVersion = version
        if provisional { metadata[.provisional] = .bool(true) }
        let beats = (0..<count).map { Heartbeat(timeSinceSeriesStart: Double($0), precededByGap: $0 == 0) }
        return .heartbeatSeries(try HeartbeatSeriesSample(
            id: id, start: at(start), end: at(start + Double(max(0, count - 1))), beats: beats, device: strap,
            metadata: metadata))
    }

    func testLaterVersionsExtendTheStoredSeriesAndEarlierOnesChangeNothing() async throws {
        let id = makeIDs().next()
        let writer = try HealthStore(path: path)
        let awaited16 = try await writer.write([try version(id, 1, beats: 2)]).inserted
        XCTAssertEqual(awaited16, 1)
        // Two versions in one batch, as a batch window collects them.
        let summary = try await writer.write([try version(id, 2, beats: 3), try version(id, 3, beats: 5)])
        XCTAssertEqual(summary.replaced, 2)
        let awaited17 = try await writer.write([try version(id, 3, beats: 4)]).ignored
        XCTAssertEqual(awaited17, 1, "same version")
        let awaited18 = try await writer.write([try version(id, 2, beats: 9)]).ignored
        XCTAssertEqual(awaited18, 1, "older version")
        XCTAssertEqual(try count("heartbeat_series"), 1)
        XCTAssertEqual(try sqlite3("SELECT beat_count, sync_version FROM heartbeat_series"), "5|3")
        let grown = try await HealthStore(path: path, access: .readOnly).heartbeatSeries()
        XCTAssertEqual(grown.first?.beats.map(\.timeSinceSeriesStart), [0, 1, 2, 3, 4])

        // The finished version drops the provisional mark.
        let awaited19 = try await writer.write([try version(id, 4, beats: 6, provisional: false)]).replaced
        XCTAssertEqual(awaited19, 1)
        let stored = try await HealthStore(path: path, access: .readOnly).heartbeatSeries()
        XCTAssertEqual(stored.count, 1)
        XCTAssertEqual(stored.first?.id, id)
        XCTAssertEqual(stored.first?.beats.count, 6)
        XCTAssertEqual(stored.first?.endDate, at(5))
        XCTAssertNil(stored.first?.metadata[.provisional])
        XCTAssertEqual(stored.first?.metadata.syncVersion, 4)
    }

    func testAVersionWithAnotherStartRewritesEveryBeat() async throws {
        let id = makeIDs().next()
        let writer = try HealthStore(path: path)
        try await writer.write([try version(id, 1, beats: 3)])
        try await writer.write([try version(id, 2, beats: 2, start: 10)])
        let stored = try await HealthStore(path: path, access: .readOnly).heartbeatSeries()
        XCTAssertEqual(stored.first?.startDate, at(10))
        XCTAssertEqual(stored.first?.beats.map(\.timeSinceSeriesStart), [0, 1])
        XCTAssertEqual(try sqlite3("SELECT beat_count FROM heartbeat_series"), "2")
    }

    func testAStoredUUIDWithoutAHigherVersionIsStillANoOp() async throws {
        let id = makeIDs().next()
        let writer = try HealthStore(path: path)
        try await writer.write([try version(id, nil, beats: 2, provisional: false)])
        let awaited20 = try await writer.write([try version(id, nil, beats: 5, provisional: false)]).ignored
        XCTAssertEqual(awaited20, 1)
        XCTAssertEqual(try sqlite3("SELECT beat_count FROM heartbeat_series"), "2")
        let stored = try await HealthStore(path: path, access: .readOnly).heartbeatSeries()
        XCTAssertEqual(stored.first?.beats.count, 2)
    }

    /// Issue 64: the straps' series grow together (a version of each every 10 s) and each
    /// version moves its row to the table's end. 24 straps, a minute's series each, for 30
    /// minutes: the table's leaf pages stay at least 85 % full (88 % here; moved one row at a
    /// time, each left a hole the inserts never reached again: 82 %).
    func testSeriesGrowingTogetherLeaveTheirTablesPagesFull() async throws {
        let ids = makeIDs()
        let writer = try HealthStore(path: path)
        for minute in 0..<30 {
            let series = (0..<24).map { _ in ids.next() }
            for slot in 1...6 {
                let versions = try series.enumerated().map { index, id in
                    let start = Double(minute * 60) + Double(index) / 24
                    let beats = (0..<(slot * 12)).map { Heartbeat(timeSinceSeriesStart: Double($0) * 0.8, precededByGap: $0 == 0) }
                    var metadata = Metadata().synced("heartbeat-series:\(id)", version: Int64(slot))
                    if slot < 6 { metadata[.provisional] = .bool(true) }
                    return HealthRecord.heartbeatSeries(try HeartbeatSeriesSample(
                        id: id, start: at(start), end: at(start + beats.last!.timeSinceSeriesStart), beats: beats,
                        device: Device(name: "Strap \(index)", localIdentifier: String(format: "C0:FF:EE:00:02:%02X", index)),
                        metadata: metadata))
                }
                try await writer.write(versions)
            }
        }
        let closing = await writer.close()
        XCTAssertNil(closing)
        let filled = try leafPagesFilled("heartbeat_series")
        XCTAssertGreaterThanOrEqual(filled, 85, "the leaf pages are \(filled) % full")
    }
}
