import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// `store.retentionDays` in the real executable: `healthgate run` prunes, when it starts, the raw
/// samples and series older than the retention, a finished workout's too unless
/// `store.keepWorkoutSamples`, keeps the newer ones and the workout, and says so in one log line.
final class RetentionEndToEndTests: XCTestCase {
    func testRunPrunesSeriesOlderThanTheRetentionAWorkoutsTooUnlessKept() async throws {
        for keep in [false, true] {
            let healthgate = try HealthgateExecutable()
            let path = healthgate.root.appendingPathComponent("samples.sqlite").path
            let now = Date()
            let strap = Device(name: "Polar H10", localIdentifier: "AA:BB:CC:DD:EE:FF")
            let ids = SampleIDGenerator()
            func heartRate(daysAgo: Double, _ index: Int) throws -> QuantitySample {
                let date = now.addingTimeInterval(-daysAgo * 86_400 + Double(index))
                return try QuantitySample(
                    id: ids.next(), type: .heartRate, quantity: Quantity(100, .countPerMinute), start: date, end: date, device: strap)
            }
            // Two series ten days old (the workout covers the first), one of a day ago; and a
            // weighing, always a plain sample, ten days old.
            let inWorkout = try (0..<30).map { try heartRate(daysAgo: 10, $0) }
            let outside = try (0..<30).map { try heartRate(daysAgo: 10, 3600 + $0) }
            let recent = try (0..<5).map { try heartRate(daysAgo: 1, $0) }
            let weighing = try QuantitySample(
                id: ids.next(), type: .bodyMass, quantity: Quantity(70, .kilogram), start: outside[0].startDate,
                end: outside[0].startDate)
            let workout = Workout(
                id: ids.next(), activityType: .cycling, startDate: inWorkout[0].startDate, endDate: inWorkout[2].endDate, duration: 2)
            let store = try HealthStore(path: path)
            try await store.write((inWorkout + outside + recent + [weighing]).map(HealthRecord.quantity) + [.workout(workout)])
            await store.close()

            let run = try await healthgate.runPruning(path, keepWorkoutSamples: keep, configurationName: "config.json")
            XCTAssertEqual(run.status, 0, run.standardError)
            let lines = run.standardError.split(separator: "\n").filter { $0.contains("store.retentionDays") }
            XCTAssertEqual(lines.count, 1, run.standardError)
            let pruned = keep ? "pruned 1 sample, 1 quantity series and 0 heartbeat series" : "pruned 1 sample, 2 quantity series and 0 heartbeat series"
            XCTAssertTrue(lines.first?.contains(pruned) ?? false, run.standardError)
            XCTAssertEqual(lines.first?.contains("store.keepWorkoutSamples"), keep, run.standardError)

            let reader = try HealthStore(path: path, access: .readOnly)
            let remaining = try await reader.samples(of: .heartRate)
            // The store keeps microseconds.
            func microseconds(_ samples: [QuantitySample]) -> [Int64] {
                samples.map { Int64(($0.startDate.timeIntervalSince1970 * 1_000_000).rounded()) }
            }
            XCTAssertEqual(microseconds(remaining), microseconds(keep ? inWorkout + recent : recent), "keepWorkoutSamples: \(keep)")
            let weighings = try await reader.samples(of: .bodyMass)
            XCTAssertEqual(weighings, [])
            let stored = try await reader.workouts()
            XCTAssertEqual(stored.map(\.id), [workout.id])
        }
    }
}
