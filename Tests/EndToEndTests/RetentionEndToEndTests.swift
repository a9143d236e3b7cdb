import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// `store.retentionDays` in the real executable: `healthgate run` prunes, when it starts, the raw
/// samples older than the retention, keeps the newer ones and a workout's, and says so in one
/// log line.
final class RetentionEndToEndTests: XCTestCase {
    func testRunPrunesSamplesOlderThanTheRetentionAndLogsOnce() async throws {
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
        let old = try (0..<30).map { try heartRate(daysAgo: 10, $0) }
        let recent = try (0..<5).map { try heartRate(daysAgo: 1, $0) }
        let kept = Array(old[0..<3])
        let workout = Workout(
            id: ids.next(), activityType: .cycling, startDate: kept[0].startDate, endDate: kept[2].endDate, duration: 2)
        let store = try HealthStore(path: path)
        try await store.write(old.map(HealthRecord.quantity) + recent.map(HealthRecord.quantity) + [.workout(workout)])
        await store.close()

        let configuration = healthgate.root.appendingPathComponent("config.json")
        try Data(#"{"store": {"path": "\#(path)", "retentionDays": 7}}"#.utf8).write(to: configuration)
        let run = try await healthgate.run(["run", "--config", configuration.path, "--duration", "3"])
        XCTAssertEqual(run.status, 0, run.standardError)
        let lines = run.standardError.split(separator: "\n").filter { $0.contains("store.retentionDays") }
        XCTAssertEqual(lines.count, 1, run.standardError)
        XCTAssertTrue(lines.first?.contains("pruned 27 samples and 0 heartbeat series") ?? false, run.standardError)

        let reader = try HealthStore(path: path, access: .readOnly)
        let remaining = try await reader.samples(of: .heartRate)
        XCTAssertEqual(Set(remaining.map(\.id)), Set((kept + recent).map(\.id)))
        let stored = try await reader.workouts()
        XCTAssertEqual(stored.map(\.id), [workout.id])
    }
}
