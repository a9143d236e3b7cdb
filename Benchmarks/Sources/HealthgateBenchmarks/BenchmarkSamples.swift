import Foundation
import HealthModel

/// The workload the ingest, HTTP and MQTT benchmarks share: heart-rate samples from one chest strap,
/// one per millisecond of sample time, published in chunks of 100 as a source would.
enum BenchmarkSamples {
    static let device = Device(
        name: "Polar H10 1A2B3C4D", manufacturer: "Polar Electro Oy", model: "H10", firmwareVersion: "5.0.0",
        localIdentifier: "A0:9E:1A:12:34:56")

    /// `count` heart-rate records starting at `start`, with time-ordered identifiers from `ids`.
    static func heartRate(count: Int, ids: SampleIDGenerator, start: Date = Date()) throws -> [HealthRecord] {
        try (0..<count).map { index in
            let date = start.addingTimeInterval(Double(index) / 1000)
            return .quantity(try QuantitySample(
                id: ids.next(), type: .heartRate, quantity: Quantity(Double(60 + index % 90), .countPerMinute),
                start: date, end: date, device: device))
        }
    }

    /// `records` split into publish calls of `size`.
    static func chunks(_ records: [HealthRecord], size: Int = 100) -> [[HealthRecord]] {
        stride(from: 0, to: records.count, by: size).map { Array(records[$0..<min($0 + size, records.count)]) }
    }
}
