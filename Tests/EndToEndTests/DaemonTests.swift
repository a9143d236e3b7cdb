import Foundation
import GatewayTesting
import XCTest

/// The daemon end to end: `demo` speaks real protocol bytes through the real decoders, the bus and
/// the SQLite store; `query` reads the samples back; `status` talks to the control socket; signals
/// stop it gracefully.
final class DaemonTests: XCTestCase {
    func testDemoThenQueryReadsTheSamplesBack() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("demo.sqlite").path
        var berlin = healthgate
        berlin.environment["TZ"] = "Europe/Berlin"
        let demo = try await berlin.run(["demo", "--duration", "4", "--db", database])
        XCTAssertEqual(demo.status, 0, demo.standardError)
        XCTAssertTrue(demo.standardOutput.contains("heartRate"), demo.standardOutput)

        // The broadcasting Polar straps store heart rates of their own, under their source.
        let broadcast = try await healthgate.run(
            ["query", "samples", "--type", "heartRate", "--source", "demo-polar-broadcast", "--db", database, "--format", "json"])
        let straps = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(broadcast.standardOutput.utf8)) as? [[String: Any]])
        XCTAssertFalse(straps.isEmpty, broadcast.standardOutput)
        XCTAssertEqual(
            Set(straps.compactMap { ($0["device"] as? [String: Any])?["manufacturer"] as? String }), ["Polar Electro Oy"])

        let query = try await healthgate.run(
            ["query", "samples", "--type", "heartRate", "--source", "demo-heart-rate", "--db", database, "--format", "json"])
        XCTAssertEqual(query.status, 0, query.standardError)
        let samples = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(query.standardOutput.utf8)) as? [[String: Any]])
        // One heart-rate measurement per second from the simulated monitor, for about four seconds.
        XCTAssertGreaterThanOrEqual(samples.count, 2, query.standardOutput)
        for sample in samples {
            XCTAssertEqual(sample["type"] as? String, "heartRate")
            XCTAssertEqual(sample["unit"] as? String, "count/min")
            let value = try XCTUnwrap(sample["value"] as? Double)
            XCTAssertTrue((30...220).contains(value), "implausible heart rate \(value)")
            let device = try XCTUnwrap(sample["device"] as? [String: Any])
            XCTAssertNotNil(device["localIdentifier"])
            XCTAssertNotNil(device["manufacturer"])
            // Provenance and the time zone the gateway ran in.
            let metadata = try XCTUnwrap(sample["metadata"] as? [String: Any])
            XCTAssertEqual(metadata["healthgate.source"] as? String, "demo-heart-rate")
            XCTAssertNotNil(metadata["healthgate.gateway"] as? String)
            XCTAssertNotNil(metadata["healthgate.version"] as? String)
            XCTAssertEqual(metadata["timeZone"] as? String, "Europe/Berlin")
        }
        let table = try await healthgate.run(
            ["query", "samples", "--type", "heartRate", "--source", "demo-heart-rate", "--db", database, "--limit", "1"])
        XCTAssertTrue(table.standardOutput.contains("SOURCE"), table.standardOutput)
        XCTAssertTrue(table.standardOutput.contains("/demo-heart-rate"), table.standardOutput)

        // The simulated serial pedometer on its pseudo-terminal: 2 steps a second after the
        // first reading (the baseline), each delta a stepCount sample from its device.
        let steps = try await healthgate.run(["query", "samples", "--type", "stepCount", "--db", database, "--format", "json"])
        XCTAssertEqual(steps.status, 0, steps.standardError)
        let stepSamples = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(steps.standardOutput.utf8)) as? [[String: Any]])
        XCTAssertFalse(stepSamples.isEmpty, demo.standardError)
        for sample in stepSamples {
            XCTAssertEqual(sample["unit"] as? String, "count")
            XCTAssertEqual(sample["value"] as? Double, 2, "the demo pedometer walks 2 steps a second")
            let device = try XCTUnwrap(sample["device"] as? [String: Any])
            XCTAssertTrue((device["localIdentifier"] as? String ?? "").hasPrefix("SIM-"), "\(device)")
        }
    }

    func testStatusFromRunningDaemonAndGracefulStopOnSIGTERM() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("status.sqlite").path
        // A box with a real-time clock says so; `status` reports where its trust comes from.
        let config = healthgate.root.appendingPathComponent("clock.json")
        try Data(#"{"clock": {"trusted": true}}"#.utf8).write(to: config)
        let daemon = try healthgate.start(["demo", "--db", database, "--config", config.path, "--quiet"])
        try await waitUntil(timeout: .seconds(60), "the control socket") {
            FileManager.default.fileExists(atPath: healthgate.controlSocket.path)
        }
        // Wait until the store has written something and the heart-rate monitor has published, as
        // the status reports it.
        var report: [String: Any]?
        let deadline = ContinuousClock.now + .seconds(30)
        while report == nil {
            let status = try await healthgate.run(["status", "--format", "json"])
            if status.status == 0,
               let json = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any],
               let plugins = json["plugins"] as? [[String: Any]],
               let sqlite = plugins.first(where: { $0["kind"] as? String == "sqlite" }),
               (sqlite["records"] as? Int ?? 0) > 0,
               // The heart-rate monitor's too: the demo's glucose meter delivers its stored records first.
               let heartRate = plugins.first(where: { $0["kind"] as? String == "ble-heart-rate" && $0["role"] as? String == "source" }),
               (heartRate["records"] as? Int ?? 0) > 0 {
                report = json
            } else if ContinuousClock.now > deadline {
                XCTFail("the sqlite sink wrote nothing within 30 s: \(status.standardOutput) \(daemon.standardError)")
                return
            }
        }
        let plugins = try XCTUnwrap(report?["plugins"] as? [[String: Any]])
        XCTAssertTrue(plugins.contains { $0["kind"] as? String == "ble-heart-rate" && $0["role"] as? String == "source" })
        XCTAssertEqual(report?["clock"] as? String, "trusted by the configuration (clock.trusted)")
        let table = try await healthgate.run(["status"])
        XCTAssertEqual(table.status, 0)
        XCTAssertTrue(table.standardOutput.contains("NAME"), table.standardOutput)
        XCTAssertTrue(table.standardOutput.contains("\nclock: trusted by the configuration (clock.trusted)\n"), table.standardOutput)

        let result = try await daemon.terminate()
        XCTAssertTrue(result.standardError.contains("received SIGTERM"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: healthgate.controlSocket.path), "the socket is removed on exit")

        // Everything the store reported as written is in the file after the stop.
        try await healthgate.assertHeartRatesStored(in: database)
    }

    func testSecondDaemonOnTheSameSocketIsRefused() async throws {
        let healthgate = try HealthgateExecutable()
        let first = try healthgate.start(["demo", "--db", healthgate.root.appendingPathComponent("a.sqlite").path, "--quiet"])
        try await waitUntil(timeout: .seconds(60), "the control socket") {
            FileManager.default.fileExists(atPath: healthgate.controlSocket.path)
        }
        let second = try await healthgate.run(["demo", "--duration", "2", "--db", healthgate.root.appendingPathComponent("b.sqlite").path])
        XCTAssertEqual(second.status, 69, second.standardError)
        XCTAssertTrue(second.standardError.contains("another healthgate is listening"), second.standardError)
        first.send(SIGINT)
        let result = try await first.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(result.status, 0, result.standardError)
    }
}
