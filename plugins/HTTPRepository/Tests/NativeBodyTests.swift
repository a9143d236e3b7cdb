import Foundation
import HealthModel
import RemoteSinkKit
@testable import HTTPRepository
import XCTest

/// The native body, assembled from each record's HealthJSON through the hand-written writer, is
/// byte for byte what `JSONEncoder` makes of the whole batch.
final class NativeBodyTests: XCTestCase {
    let ids = SampleIDGenerator(seed: 11)

    func testNativeBodyThroughTheWriterIsByteIdenticalToHealthJSON() throws {
        let device = Device(name: "Polar H10", manufacturer: "Polar Electro Oy", localIdentifier: "A0:9E:1A:12:34:56")
        let start = Date(timeIntervalSince1970: 1_800_000_000.5)
        var samples: [QuantitySample] = []
        for index in 0..<20 {
            let value: Double = Double(60 + index) + (index % 3 == 0 ? 0.5 : 0)
            let date = start.addingTimeInterval(Double(index))
            samples.append(try QuantitySample(
                id: ids.next(), type: .heartRate, quantity: Quantity(value, .countPerMinute), start: date, end: date, device: device))
        }
        let batch = FollowerBatch(
            after: 0, through: Int64(samples.count),
            changes: samples.enumerated().map { .stored(.quantity($1), anchor: Int64($0 + 1)) }, payloadIdentity: "")
        let expected = try HealthJSON.makeEncoder().encode(NativeBatch(samples: samples))
        let body = try XCTUnwrap(try PayloadBuilder(format: .native, patientReference: nil).body(for: batch))
        XCTAssertEqual(String(decoding: body, as: UTF8.self), String(decoding: expected, as: UTF8.self))
    }

    /// Issue 65: a batch that names people lists each with their identifiers, once; a person
    /// without identifiers is an empty object, and one the batch does not name is absent.
    func testABatchListsThePeopleItNamesWithTheirIdentifiers() throws {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        func weighing(_ kilograms: Double, _ person: String?) throws -> QuantitySample {
            try QuantitySample(
                id: ids.next(), type: .bodyMass, quantity: Quantity(kilograms, .kilogram), start: date, end: date,
                metadata: person.map { [.person: .string($0)] } ?? [:])
        }
        let samples = [try weighing(61.2, "Ana"), try weighing(80.4, "Ben"), try weighing(61.3, "Ana"), try weighing(70, nil)]
        let batch = FollowerBatch(
            after: 0, through: 4, changes: samples.enumerated().map { .stored(.quantity($1), anchor: Int64($0 + 1)) }, payloadIdentity: "")
        let builder = PayloadBuilder(
            format: .native, patientReference: nil, patients: ["Ana": "Patient/ana-7", "Cai": "Patient/cai"], users: ["Ana": "u-ana"])
        let body = try XCTUnwrap(try builder.body(for: batch))
        let expected = NativeBatch(
            people: ["Ana": .init(fhirPatient: "Patient/ana-7", openMHealthUser: "u-ana"), "Ben": .init()], samples: samples)
        XCTAssertEqual(
            String(decoding: body, as: UTF8.self), String(decoding: try HealthJSON.makeEncoder().encode(expected), as: UTF8.self))
        XCTAssertEqual(try HealthJSON.makeDecoder().decode(NativeBatch.self, from: body).people.keys.sorted(), ["Ana", "Ben"])
    }
}
