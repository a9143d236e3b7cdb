import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import MQTTBroker
import RemoteSinkKit
import SQLite
import SQLiteStore
import XCTest

/// One real `healthgate run` of a fleet: its own private root (``HealthgateExecutable``), a
/// simulated heart-rate monitor, a `sqlite` sink (the gateway's own record) and an `mqtt` sink
/// named `broker` publishing to a test broker under its `gatewayName`.
struct FleetGateway {
    let gatewayName: String
    let executable: HealthgateExecutable
    let config: URL

    /// Writes the configuration. `mqtt` is extra JSON for the mqtt sink's `config` object.
    init(gatewayName: String, brokerPort: Int, mqtt: String = "") throws {
        self.gatewayName = gatewayName
        executable = try HealthgateExecutable()
        config = executable.root.appendingPathComponent("config/gateway.json")
        let extra = mqtt.isEmpty ? "" : ", \(mqtt)"
        try """
            {"gatewayName": "\(gatewayName)",
             "sources": [{"kind": "ble-heart-rate", "name": "strap", "config": {
                "transport": "simulated", "simulation": {"notificationsPerSecond": 10}, "heartbeatSeriesSeconds": 1}}],
             "store": {"path": "\(storePath)"},
             "sinks": [{"kind": "sqlite", "name": "store"},
                       {"kind": "mqtt", "name": "broker", "config": {
                         "host": "127.0.0.1", "port": \(brokerPort), "batchSize": 5, "ackTimeoutSeconds": 2,
                         "retry": {"initialDelaySeconds": 0.1, "maxDelaySeconds": 1}\(extra)}}]}
            """.write(to: config, atomically: true, encoding: .utf8)
    }

    var storePath: String { executable.root.appendingPathComponent("data/store.sqlite").path }

    /// Starts `healthgate run`, for `seconds` (then it stops gracefully) or until killed.
    func start(seconds: Double? = nil) throws -> HealthgateExecutable.RunningProcess {
        try executable.start(["run", "--config", config.path] + (seconds.map { ["--duration", String($0)] } ?? []))
    }

    /// The uuids of every record the store holds: the mqtt sink publishes each one, in its latest
    /// version (a heartbeat series as it grows, too).
    func storedUUIDs() async throws -> Set<String> {
        let store = try HealthStore(path: storePath, access: .readOnly)
        let heartRates = try await store.samples(of: .heartRate)
        let series = try await store.heartbeatSeries()
        // Nothing else is stored: the simulated monitor measures heart rate and beat intervals.
        let connection = try SQLiteConnection(path: storePath, mode: .readOnly)
        let counts = try connection.query(
            "SELECT (SELECT count(*) FROM samples), (SELECT count(*) FROM workouts), (SELECT count(*) FROM correlations)")
        XCTAssertEqual(counts.first?.integer(0), Int64(heartRates.count), "only heart-rate samples are stored")
        XCTAssertEqual(counts.first?.integer(1), 0)
        XCTAssertEqual(counts.first?.integer(2), 0)
        return Set(heartRates.map(\.id.uuidString) + series.map(\.id.uuidString))
    }

    /// Waits until at least `count` records wait in the store unsent (the broker is down); when
    /// they do not come, kills `process` and throws with its log.
    func waitUntilUnsent(_ count: Int, running process: HealthgateExecutable.RunningProcess) async throws {
        do {
            try await waitUntil(timeout: .seconds(60), "records waiting in the store while the broker is down") {
                ((try? await unsentRecords().count) ?? 0) >= count
            }
        } catch {
            process.send(SIGKILL)
            throw GatewayFailed(description: "\(error); the gateway logged:\n\(process.standardError.suffix(4000))")
        }
    }

    struct GatewayFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// The records after the mqtt sink's committed cursor (none before the sink registered), by
    /// uuid, each with the HealthJSON the sink publishes for its current version.
    func unsentRecords() async throws -> [String: String] {
        guard FileManager.default.fileExists(atPath: storePath) else { return [:] }
        let store = try HealthStore(path: storePath, access: .readOnly)
        guard let cursor = try await store.follower("broker")?.anchor else { return [:] }
        let encoder = HealthJSON.makeEncoder()
        var unsent: [String: String] = [:]
        for record in try await store.changes(since: cursor).added {
            unsent[record.id.uuidString] = String(decoding: try HealthJSONPayload.encode(record, encoder: encoder), as: UTF8.self)
        }
        return unsent
    }
}
