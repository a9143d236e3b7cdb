import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// Issue #57's budget on a class-hour's store: 30 straps for an hour, a heart rate a second
/// each (as the bus delivers them, a thousand to a transaction), a 70-beat heartbeat series a
/// minute each, and a workout each: at most 16 bytes per heart-rate sample, everything in the
/// file included, once the write-ahead log is folded into it. The `class-day` benchmark
/// measures the same at a day's scale (Benchmarks/RESULTS.md).
final class ClassHourSizeTests: StoreTestCase {
    func testAClassHourTakesAtMost16BytesPerHeartRateSample() async throws {
        let straps = (0..<30).map { index in
            Device(name: "HRM-Dual", manufacturer: "Garmin", localIdentifier: "garmin/\(3300 + index)", radioIdentifier: "ant:120:\(3300 + index)")
        }
        let ids = makeIDs()
        var random = SeededRandom(seed: 30)
        let store = try HealthStore(path: path)
        var rates = straps.map { _ in Double.random(in: 70...120, using: &random) }
        var pending: [HealthRecord] = []
        var readings = 0
        for second in 0..<3600 {
            for (index, strap) in straps.enumerated() {
                // Each strap's reading about a second apart, as its radio's messages arrive.
                rates[index] = min(185, max(55, rates[index] + Double.random(in: -2...2, using: &random)))
                let start = at(Double(second) + Double(index) / 30 + Double.random(in: -0.03...0.03, using: &random))
                pending.append(.quantity(try QuantitySample(
                    id: ids.next(), type: .heartRate, quantity: Quantity(rates[index].rounded(), .countPerMinute), start: start,
                    end: start, device: strap, metadata: [.sourceName: .string("ant-class")])))
                readings += 1
                if second % 60 == 59 {
                    var ticks = 0
                    let beats = (0..<70).map { _ in
                        ticks += Int.random(in: 840...870, using: &random)
                        return Heartbeat(timeSinceSeriesStart: Double(ticks) / 1024, precededByGap: false)
                    }
                    pending.append(.heartbeatSeries(try HeartbeatSeriesSample(
                        id: ids.next(), start: at(Double(second - 59)), end: at(Double(second + 1)), beats: beats, device: strap,
                        metadata: [.sourceName: .string("ant-class")])))
                }
            }
            if pending.count >= 1000 {
                try await store.write(pending)
                pending = []
            }
        }
        let workouts = straps.map { strap in
            Workout(
                id: ids.next(), activityType: .cycling, startDate: at(0), endDate: at(3600), duration: 3600,
                statistics: [QuantityStatistics(type: .heartRate, startDate: at(0), endDate: at(3600), sampleCount: 3600, average: 120)],
                metadata: [.workoutDevices: .string(strap.localIdentifier ?? "")])
        }
        try await store.write(pending + workouts.map(HealthRecord.workout))
        await store.close()

        let reader = try HealthStore(path: path)
        try await reader.checkpointLog()
        let count = try await reader.statistics(of: .heartRate, from: at(-1), to: at(3601)).sampleCount
        XCTAssertEqual(count, readings)
        let bytes = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let perSample = Double(bytes) / Double(readings)
        XCTAssertLessThanOrEqual(perSample, 16, "\(bytes) bytes for \(readings) heart rates")
        let workout = try await reader.workout(id: workouts[7].id)
        XCTAssertEqual(workout?.samples.count, 3600)
        XCTAssertEqual(workout?.curves.first?.points.count, 720)
        print("class hour: \(bytes) bytes, \(String(format: "%.2f", perSample)) bytes per heart-rate sample")
    }
}
