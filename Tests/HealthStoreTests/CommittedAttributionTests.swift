import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// Issue 77: whose a reading is, and whether it may be stored at all, is decided in the
/// transaction that stores it, by its own start, against what is committed before it.
final class CommittedAttributionTests: StoreTestCase {
    static let scale = Device(name: "Shared scale", localIdentifier: "02:00:00:00:03:01")

    /// A reading of `type` (in its canonical unit) at `date` from `device`.
    func reading(
        _ ids: SampleIDGenerator, _ type: QuantityType, _ value: Double, _ unit: HealthUnit,
        at date: Date, device: Device = StoreTestCase.strap
    ) throws -> HealthRecord {
        .quantity(try QuantitySample(id: ids.next(), type: type, quantity: Quantity(value, unit), start: date, end: date, device: device))
    }

    /// A plain reading (kept as a sample of its own) of `value` at `date` from the strap.
    func plain(_ ids: SampleIDGenerator, _ value: Double, at date: Date) throws -> HealthRecord {
        try reading(ids, StoreTestCase.plainType, value, .millisecond, at: date)
    }

    func persons(_ store: HealthStore, _ type: QuantityType = StoreTestCase.plainType) async throws -> [Double: String] {
        var result: [Double: String] = [:]
        for sample in try await store.samples(of: type) { result[sample.quantity.value] = HealthRecord.quantity(sample).person ?? "-" }
        return result
    }

    /// A strap handed from Ana to Ben at 30 s: one batch written after the handover, holding
    /// readings from before and after it, is split at its instant; another connection's
    /// handover (a second process) is seen by the next write.
    func testAHandoverSplitsABatchAtItsInstant() async throws {
        let ids = makeIDs()
        let store = try HealthStore(path: path)
        try store.storeParticipantAssignment(ParticipantAssignment(device: "AA:BB:CC:DD:EE:FF", participant: "Ana"), at: at(0))
        try store.storeParticipantAssignment(ParticipantAssignment(device: "AA:BB:CC:DD:EE:FF", participant: "Ben"), at: at(30))
        try await store.write([10, 29, 30, 45].map { try plain(ids, $0, at: at($0)) })
        var stored = try await persons(store)
        XCTAssertEqual(stored, [10: "Ana", 29: "Ana", 30: "Ben", 45: "Ben"])

        let other = try HealthStore(path: path)
        try other.storeParticipantAssignment(ParticipantAssignment(device: "AA:BB:CC:DD:EE:FF", participant: "Cai"), at: at(60))
        await other.close()
        try await store.write([59, 61].map { try plain(ids, $0, at: at($0)) })
        stored = try await persons(store)
        XCTAssertEqual(stored[59], "Ben")
        XCTAssertEqual(stored[61], "Cai", "another connection's assignment, committed before the write")
        XCTAssertEqual(store.attributionCounts.attributed, 6)
        await store.close()
    }

    /// A body composition scale shared by weight sends its weight and then, in a later batch,
    /// the body fat and lean mass of the same instant: each companion takes the weighing's
    /// person; another instant's body fat with no weighing is nobody's.
    func testAWeighingsOtherReadingsFollowItInALaterBatch() async throws {
        let ids = makeIDs()
        let store = try HealthStore(path: path)
        try await store.attributeReadings(by: AttributionRoster([
            .init(name: "Ana", sharedDevices: [SharedDeviceUse(device: "02:00:00:00:03:01")], referenceWeightKilograms: 52),
            .init(name: "Ben", sharedDevices: [SharedDeviceUse(device: "02:00:00:00:03:01")], referenceWeightKilograms: 71),
        ]))
        try await store.write([try reading(ids, .bodyMass, 72.4, .kilogram, at: at(0), device: Self.scale)])
        try await store.write([
            try reading(ids, .bodyFatPercentage, 0.229, .percent, at: at(0), device: Self.scale),
            try reading(ids, .leanBodyMass, 55.8, .kilogram, at: at(0), device: Self.scale),
            try reading(ids, .bodyFatPercentage, 0.3, .percent, at: at(5), device: Self.scale),
        ])
        let weighings = try await persons(store, .bodyMass)
        XCTAssertEqual(weighings, [72.4: "Ben"])
        let fat = try await persons(store, .bodyFatPercentage)
        XCTAssertEqual(fat.values.sorted(), ["-", "Ben"], "\(fat)")
        let lean = try await persons(store, .leanBodyMass)
        XCTAssertEqual(lean, [55.8: "Ben"])
        XCTAssertEqual(store.attributionCounts.unattributed, ["sharedDevice": 1])
        await store.close()
    }

    /// `participant erase Ana` in another process while her strap's readings wait to be
    /// written and her heartbeat series is open: none of her readings dated before the erase is
    /// stored afterwards, the series' next version does not bring its uuid back, also after the
    /// store is opened again; a reading dated after the erase is stored, as nobody's.
    func testAnEraseHoldsForTheReadingsInFlight() async throws {
        let ids = makeIDs()
        let start = Date().addingTimeInterval(-30)
        let store = try HealthStore(path: path)
        try store.storeParticipantAssignment(ParticipantAssignment(device: "AA:BB:CC:DD:EE:FF", participant: "Ana"), at: start)
        let beats = (0..<10).map { Heartbeat(timeSinceSeriesStart: Double($0) * 0.8, precededByGap: $0 == 0) }
        let seriesID = ids.next()
        func series(_ count: Int, version: Int64) throws -> HealthRecord {
            .heartbeatSeries(try HeartbeatSeriesSample(
                id: seriesID, start: start + 1, end: start + 1 + beats[count - 1].timeSinceSeriesStart, beats: Array(beats[..<count]),
                device: strap,
                metadata: [.provisional: .bool(true), .syncIdentifier: .string("heartbeat-series:strap"), .syncVersion: .integer(version)]))
        }
        try await store.write([try plain(ids, 1, at: start + 1), try series(5, version: 1)])
        let before = try await persons(store)
        XCTAssertEqual(before, [1: "Ana"])

        let eraser = try HealthStore(path: path)
        let erased = try await eraser.delete(.person("Ana"))
        XCTAssertEqual(Set(erased.map(\.kind)), [.quantity, .heartbeatSeries])
        await eraser.close()

        // In flight: dated before the erase, written after it.
        try await store.write([try plain(ids, 2, at: start + 20), try series(10, version: 2)])
        let later = Date().addingTimeInterval(1)
        try await store.write([try plain(ids, 3, at: later)])
        let after = try await persons(store)
        XCTAssertEqual(after, [3: "-"], "only the reading after the erase, nobody's")
        let storedSeries = try await store.heartbeatSeries()
        XCTAssertEqual(storedSeries.map(\.id), [], "the erased series does not come back")
        XCTAssertEqual(store.attributionCounts.erased, 2)
        await store.close()

        let reopened = try HealthStore(path: path)
        try await reopened.write([try plain(ids, 4, at: start + 25), try series(10, version: 3)])
        let reopenedPersons = try await persons(reopened)
        XCTAssertEqual(reopenedPersons, [3: "-"])
        let reopenedSeries = try await reopened.heartbeatSeries()
        XCTAssertEqual(reopenedSeries.map(\.id), [])
        await reopened.close()
    }
}
