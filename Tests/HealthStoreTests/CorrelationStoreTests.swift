import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// Blood-pressure correlations in the store: the record, its members as ordinary samples, and
/// the sync-identifier rules.
final class CorrelationStoreTests: StoreTestCase {
    let cuff = Device(name: "BP7000", manufacturer: "Omron", localIdentifier: "00:5F:BF:12:34:56")

    func reading(
        _ ids: SampleIDGenerator, _ systolic: Double, _ diastolic: Double, at offset: Double, sequence: Int? = nil,
        version: Int64? = nil
    ) throws -> CorrelationSample {
        func member(_ type: QuantityType, _ value: Double) throws -> QuantitySample {
            try QuantitySample(
                id: ids.next(), type: type, quantity: Quantity(value, .millimeterOfMercury), start: at(offset),
                end: at(offset), device: cuff)
        }
        var metadata = Metadata()
        if let sequence { metadata.syncIdentifier = "00:5F:BF:12:34:56/bloodPressure/\(sequence)" }
        metadata.syncVersion = version
        metadata[MetadataKey("healthgate.userIndex")] = .integer(1)
        return try .bloodPressure(
            id: ids.next(), systolic: try member(.bloodPressureSystolic, systolic),
            diastolic: try member(.bloodPressureDiastolic, diastolic), device: cuff, metadata: metadata)
    }

    func testCorrelationRoundTripsWithItsMembersStoredAsSamples() async throws {
        let ids = makeIDs()
        let morning = try reading(ids, 121, 79, at: 0)
        let evening = try reading(ids, 131, 85, at: 36_000)
        let writer = try HealthStore(path: path)
        let summary = try await writer.write([.correlation(evening), .correlation(morning)])
        XCTAssertEqual(summary.inserted, 2)
        let awaited5 = try await writer.write([.correlation(morning)]).ignored
        XCTAssertEqual(awaited5, 1, "a uuid stored already is a no-op")
        XCTAssertEqual(try count("correlations"), 2)
        XCTAssertEqual(try count("correlation_members"), 4)
        XCTAssertEqual(try count("samples"), 4)

        let store = try HealthStore(path: path, access: .readOnly)
        let all = try await store.correlations(of: .bloodPressure)
        XCTAssertEqual(all, [morning, evening])
        let late = try await store.correlations(of: .bloodPressure, from: at(60), to: at(86_400))
        XCTAssertEqual(late, [evening])
        let systolic = try await store.samples(of: .bloodPressureSystolic)
        XCTAssertEqual(systolic.map(\.quantity.value), [121, 131], "members are ordinary samples")
        let statistics = try await store.statistics(of: .bloodPressureDiastolic, from: t0, to: at(86_400))
        XCTAssertEqual(statistics.average ?? 0, 82, accuracy: 1e-9)
        XCTAssertEqual(statistics.sampleCount, 2)
    }

    func testADownloadedRecordIsStoredOnceAndAHigherVersionReplacesItsMembers() async throws {
        let ids = makeIDs()
        let first = try reading(ids, 121, 79, at: 0, sequence: 7)
        let again = try reading(ids, 121, 79, at: 0, sequence: 7)
        let corrected = try reading(ids, 122, 78, at: 0, sequence: 7, version: 2)
        let writer = try HealthStore(path: path)
        let awaited6 = try await writer.write([.correlation(first)]).inserted
        XCTAssertEqual(awaited6, 1)
        let awaited7 = try await writer.write([.correlation(again)]).ignored
        XCTAssertEqual(awaited7, 1, "same sync identifier, same version")
        XCTAssertEqual(try count("samples"), 2, "the copy's members are not stored either")
        let awaited8 = try await writer.write([.correlation(corrected)]).replaced
        XCTAssertEqual(awaited8, 1)
        XCTAssertEqual(try count("correlations"), 1)
        XCTAssertEqual(try count("samples"), 2, "the replaced reading's members went with it")
        let stored = try await HealthStore(path: path, access: .readOnly).correlations(of: .bloodPressure)
        XCTAssertEqual(stored, [corrected])
        XCTAssertEqual(stored.first?.metadata[MetadataKey("healthgate.userIndex")], .integer(1))
    }
}
