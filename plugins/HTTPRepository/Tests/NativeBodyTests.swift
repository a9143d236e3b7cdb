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
}
