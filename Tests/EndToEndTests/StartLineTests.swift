import Foundation
import GatewayTesting
import XCTest

/// The line `run` logs when it has started counts what the configuration file configures, not
/// the gateway's built-in workout plugins, and says it in plain English; so does the stop.
final class StartLineTests: XCTestCase {
    func testTheStartLineCountsTheConfiguredSourcesAndSinks() async throws {
        let healthgate = try HealthgateExecutable()
        let config = healthgate.root.appendingPathComponent("one-each.json")
        try """
            {"sources": [{"kind": "ble-heart-rate", "name": "strap", "config": {
                "transport": "simulated", "simulation": {"heartRateMonitors": 1}}}],
             "sinks": [{"kind": "sqlite", "name": "store"}]}
            """.write(to: config, atomically: true, encoding: .utf8)
        let one = try await healthgate.run(["run", "--config", config.path, "--duration", "1"])
        XCTAssertEqual(one.status, 0, one.standardError)
        XCTAssertTrue(one.standardError.contains("started with 1 source and 1 sink from \(config.path)"), one.standardError)
        let line = one.standardError.split(separator: "\n").first { $0.contains("started with") } ?? ""
        XCTAssertFalse(line.contains("(s)"), String(line))
        // The run's version, against which a crash's backtrace in the same journal is read.
        let version = try await healthgate.run(["--version"]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(line.hasSuffix("(healthgate \(version.split(separator: " ").last ?? ""))"), "\(line) against \(version)")
        // Issue #45: the stop counts no internal plugin either (it said "draining 4 sink(s)"),
        // and no message of the run says "(s)".
        XCTAssertTrue(one.standardError.contains("sources stopped; draining the sinks"), one.standardError)
        XCTAssertFalse(one.standardError.contains("(s)"), one.standardError)
        let stopped = one.standardError.split(separator: "\n").first { $0.contains("stopped (records published: ") } ?? ""
        XCTAssertTrue(stopped.contains("records published: strap "), String(stopped))
        XCTAssertTrue(stopped.contains("records written: store "), String(stopped))
        XCTAssertFalse(stopped.contains("workouts"), "the workouts' built-in plugins are not the file's: \(stopped)")

        try """
            {"sources": [
                {"kind": "ble-heart-rate", "name": "a", "config": {"transport": "simulated", "simulation": {"heartRateMonitors": 1}}},
                {"kind": "ble-heart-rate", "name": "b", "config": {"transport": "simulated", "simulation": {"heartRateMonitors": 1}}}],
             "sinks": [{"kind": "sqlite", "name": "store"}]}
            """.write(to: config, atomically: true, encoding: .utf8)
        let two = try await healthgate.run(["run", "--config", config.path, "--duration", "1"])
        XCTAssertEqual(two.status, 0, two.standardError)
        XCTAssertTrue(two.standardError.contains("started with 2 sources and 1 sink from \(config.path)"), two.standardError)
    }
}
