import BLEProfileKit
import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import SQLiteStore
import XCTest

/// The series being built survives kill -9: the built `healthgate run` with a simulated monitor
/// and the SQLite store, killed with SIGKILL long before its first series is due
/// (`heartbeatSeriesSeconds` 60). The store holds the series' beats up to its last provisional
/// version: at most a slot of the cadence (10 s) and the batch window before the kill.
final class SeriesCrashTests: XCTestCase {
    func testSeriesBeingBuiltIsStoredUpToTheBatchWindowAfterKillDashNine() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("series.sqlite")
        let config = healthgate.root.appendingPathComponent("series.json")
        try """
            {"sources": [{"kind": "ble-heart-rate", "name": "strap", "config": {
                "transport": "simulated", "simulation": {"notificationsPerSecond": 4}}}],
             "sinks": [{"kind": "sqlite", "config": {"batchWindowSeconds": 0.1}}], "store": {"path": "\(database.path)"},
             "controlSocket": "\(healthgate.root.path)/series.sock"}
            """.write(to: config, atomically: true, encoding: .utf8)
        let gateway = try healthgate.start(["run", "--config", config.path])
        // Sixteen seconds of heart rate stored: the series has been growing for as long, and a
        // provisional version after its first has come (a slot of the cadence has begun).
        do {
            try await waitUntil(timeout: .seconds(60), "sixteen seconds of heart rate in the store") {
                guard let samples = try? await Self.heartRates(database) else { return false }
                guard let first = samples.first, let last = samples.last else { return false }
                return last.endDate.timeIntervalSince(first.endDate) >= 16
            }
        } catch {
            gateway.send(SIGKILL)
            XCTFail("\(error); the gateway logged:\n\(gateway.standardError.suffix(4000))")
            return
        }
        gateway.send(SIGKILL)
        let exit = try await gateway.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(exit.status, SIGKILL)

        let store = try HealthStore(path: database.path, access: .readOnly)
        let heartRates = try await store.samples(of: .heartRate)
        let series = try await store.heartbeatSeries()
        let lastHeartRate = try XCTUnwrap(heartRates.last?.endDate)
        let firstHeartRate = try XCTUnwrap(heartRates.first?.endDate)
        // One series (the provisional versions replaced one another), from the first notification;
        // or two, when an edge of the clock's minutes (the series' slots) cut the first.
        XCTAssertTrue((1...2).contains(series.count), "\(series.map(\.metadata))")
        let first = try XCTUnwrap(series.first)
        let stored = try XCTUnwrap(series.last)
        XCTAssertNotNil(stored.metadata.syncIdentifier)
        if stored.metadata[.provisional] != .bool(true) {
            // A minute's edge cut the series (its finished version replaced the provisional ones)
            // and the kill came before a beat of the next: a notification carries a beat about
            // every third time, so that is up to a beat and a batch after the edge (a run in
            // about fifty). The last heart rate is then that edge's notification or one soon after.
            let edge = (lastHeartRate.timeIntervalSince1970 / 60).rounded(.down) * 60
            XCTAssertLessThan(
                lastHeartRate.timeIntervalSince1970 - edge, 3,
                "a finished series last, but no minute's edge just before the last heart rate: \(stored.metadata)")
            XCTAssertNotNil(stored.metadata.syncVersion, "the finished version replaces provisional ones")
        }
        // Otherwise a version published as it grew, still marked so after the crash.
        XCTAssertLessThanOrEqual(first.startDate, firstHeartRate)
        // Its last beat is at most a slot of the cadence, one beat (the simulated heart rate stays
        // above 55/min) and one notification (a batch may end between a heart rate and its series
        // version) before the last heart rate stored.
        let slot = HeartbeatSeriesVersionTracker.provisionalSlot
        XCTAssertGreaterThanOrEqual(stored.endDate, lastHeartRate.addingTimeInterval(-slot - 60.0 / 55 - 0.25))
        XCTAssertLessThanOrEqual(stored.endDate, lastHeartRate.addingTimeInterval(3))
        // And the beats account for the time covered (about 78 per minute).
        let seconds = stored.endDate.timeIntervalSince(stored.startDate)
        XCTAssertEqual(Double(stored.beats.count - 1), seconds * 78 / 60, accuracy: seconds * 25 / 60 + 1)
    }

    private static func heartRates(_ database: URL) async throws -> [QuantitySample] {
        guard FileManager.default.fileExists(atPath: database.path) else { return [] }
        return try await HealthStore(path: database.path, access: .readOnly).samples(of: .heartRate)
    }
}
