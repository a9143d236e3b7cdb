import Foundation
import HealthModel
import RemoteOutbox
@testable import HTTPRepository
import XCTest

/// The native body assembled from payloads the outbox stored through the hand-written writer is
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
        let encoder = HealthJSON.makeEncoder()
        var writer = QuantitySampleJSONWriter()
        let entries = try samples.map { sample in
            OutboxRecord(
                id: sample.id, kind: .quantity,
                payload: try StoredPayload.encode(.quantity(sample), encoder: encoder, writer: &writer), enqueuedAt: start)
        }
        let expected = try encoder.encode(NativeBatch(samples: samples))
        XCTAssertEqual(String(decoding: PayloadBuilder(format: .native, patientReference: nil).body(for: entries), as: UTF8.self),
                       String(decoding: expected, as: UTF8.self))
    }
}
