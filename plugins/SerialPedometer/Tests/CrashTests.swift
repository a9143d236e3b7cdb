import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import LinuxSystem
import SQLite
import SQLiteStore
import SampleBus
import SerialPedometer
import Synchronization
import XCTest

/// The crash suite for the serial pedometer: the built `healthgate run` reads a real pty that
/// this test drives as an HGP/1 device, and is killed with SIGKILL shortly after readings. The
/// totals in SQLite must be exact after every restart: the counter baseline is committed in the
/// same transaction as the samples (README, "Durability").
final class CrashTests: XCTestCase {
    /// The device end of one pty: answers identification requests and sends readings.
    final class PedometerLine: Sendable {
        let pty: PseudoTerminal
        let serial: String

        init(serial: String) throws {
            pty = try PseudoTerminal()
            self.serial = serial
        }

        /// Throws away what the gateway wrote so far (requests of a previous run).
        func drain() {
            while let chunk = try? pty.master.read(), !chunk.isEmpty {}
        }

        /// Waits for the gateway's `ID?`, then answers with this device's identity.
        func identify(within timeout: Duration = .seconds(30)) async throws {
            let received = Mutex<[UInt8]>([])
            try await waitUntil(timeout: timeout, "the gateway to ask ID?") {
                if let chunk = try? self.pty.master.read() { received.withLock { $0 += chunk } }
                return String(decoding: received.withLock { $0 }, as: UTF8.self).contains("ID?")
            }
            try send("ID,Acme,StepPod,\(serial),1.0")
        }

        func send(_ body: String) throws {
            try pty.write(Array(HGPTextDecoder.sentence(body).utf8))
        }
    }

    var healthgate: HealthgateExecutable!
    var database: String { healthgate.root.appendingPathComponent("samples.sqlite").path }

    override func setUpWithError() throws {
        healthgate = try HealthgateExecutable()
    }

    override func tearDownWithError() throws {
        if let healthgate { try? FileManager.default.removeItem(at: healthgate.root) }
    }

    /// A configuration with one `path` source per link and the SQLite store with its default
    /// batch window (100 ms): the window in which the kills land.
    func writeConfig(paths: [URL]) throws -> URL {
        let sources = paths.enumerated().map { index, path in
            #"{"kind": "serial-pedometer", "name": "port\#(index)", "config": {"path": "\#(path.path)", "exclusive": false}}"#
        }
        let config = healthgate.root.appendingPathComponent("config.json")
        try """
            {"sources": [\(sources.joined(separator: ", "))],
             "sinks": [{"kind": "sqlite", "name": "store"}], "store": {"path": "\(database)"}}
            """.write(to: config, atomically: true, encoding: .utf8)
        return config
    }

    func link(_ name: String, to line: PedometerLine) throws -> URL {
        let link = healthgate.root.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: link)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: line.pty.slavePath)
        return link
    }

    /// Sum of the stored samples of `type`.
    func total(_ type: QuantityType) async throws -> Double {
        guard FileManager.default.fileExists(atPath: database) else { return 0 }
        return try await HealthStore(path: database, access: .readOnly).samples(of: type).reduce(0) { $0 + $1.quantity.value }
    }

    /// The committed counter of `serial`, if any.
    static func committedCounter(_ serial: String, database: String) async throws -> StepCounterState? {
        let checkpoint = try await HealthStore(path: database, access: .readOnly)
            .checkpoint(namespace: CounterCheckpoint.namespace, key: serial)
        return try checkpoint.map { try CounterCheckpoint.state(in: $0) }
    }

    func integrityCheck() throws -> String? {
        let connection = try SQLiteConnection(path: database)
        return try connection.query("PRAGMA integrity_check").first?.text(0)
    }

    func waitForCounter(_ serial: String, steps: UInt32) async throws {
        let database = database
        try await waitUntil(timeout: .seconds(30), "counter \(steps) of \(serial) committed") {
            let state = try? await Self.committedCounter(serial, database: database)
            return state?.steps == steps
        }
    }

    /// Waits until a source has counted `steps` for `serial` (published, maybe not committed), as
    /// `healthgate status` reports it.
    func waitForPublished(_ serial: String, steps: UInt32) async throws {
        let healthgate = healthgate!
        try await waitUntil(timeout: .seconds(30), "counter \(steps) of \(serial) published") {
            guard let status = try? await healthgate.run(["status", "--format", "json"]), status.status == 0,
                let json = try? JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any],
                let plugins = json["plugins"] as? [[String: Any]]
            else { return false }
            return plugins.contains { ($0["details"] as? [String: String])?["counter.\(serial)"] == String(steps) }
        }
    }

    /// Stops gracefully and checks the exit.
    func stop(_ process: HealthgateExecutable.RunningProcess) async throws {
        process.send(SIGTERM)
        let result = try await process.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(result.status, 0, result.standardError.suffix(3000).description)
    }

    func testTwentyKillsShortlyAfterReadingsLoseNoStepAndNoMeter() async throws {
        let line = try PedometerLine(serial: "SN-CRASH")
        defer { line.pty.hangUp() }
        let config = try writeConfig(paths: [try link("pedometer", to: line)])
        var steps: UInt32 = 10_000
        var meters = 5_000.0
        let baseline = (steps, meters)

        var process = try healthgate.start(["run", "--config", config.path])
        try await line.identify()
        try line.send("ST,\(steps),\(meters)")
        try await waitForCounter("SN-CRASH", steps: steps)

        for kill in 0..<20 {
            // 5 ms to 250 ms after the reading, spread evenly: inside and beyond the batch window.
            let delay = 5 + kill * 245 / 19
            steps += 25
            // Every third reading has no distance: it must not erase the distance baseline.
            if kill % 3 == 2 {
                try line.send("ST,\(steps)")
            } else {
                meters += 9.75
                try line.send("ST,\(steps),\(meters)")
            }
            // The delay is what the test varies (where in the batch window the kill lands), not
            // a wait for some state.
            try await Task.sleep(for: .milliseconds(delay))
            process.send(SIGKILL)
            _ = try await process.waitForExit(timeout: .seconds(30))
            XCTAssertEqual(try integrityCheck(), "ok", "after kill \(kill) at \(delay) ms")
            line.drain()
            process = try healthgate.start(["run", "--config", config.path])
            try await line.identify()
        }
        steps += 25
        meters += 9.75
        try line.send("ST,\(steps),\(meters)")
        try await waitForCounter("SN-CRASH", steps: steps)
        try await stop(process)

        let storedSteps = try await total(.stepCount)
        let storedMeters = try await total(.distanceWalkingRunning)
        XCTAssertEqual(storedSteps, Double(steps - baseline.0), "steps walked: \(steps - baseline.0)")
        XCTAssertEqual(storedMeters, meters - baseline.1, accuracy: 1e-6)
        XCTAssertEqual(try integrityCheck(), "ok")
    }

    func testAPedometerMovedFromPortAToBAndBackIsCountedOnceWithoutOverlap() async throws {
        let portA = try PedometerLine(serial: "SN-MOVE")
        let portB = try PedometerLine(serial: "SN-MOVE")
        defer {
            portA.pty.hangUp()
            portB.pty.hangUp()
        }
        let config = try writeConfig(paths: [try link("port-a", to: portA), try link("port-b", to: portB)])
        var steps: UInt32 = 300
        var meters = 200.0
        let baseline = (steps, meters)
        var process = try healthgate.start(["run", "--config", config.path])
        try await portA.identify()
        try portA.send("ST,\(steps),\(meters)")
        try await waitForCounter("SN-MOVE", steps: steps)

        func walk(_ readings: Int, on line: PedometerLine) throws {
            for _ in 0..<readings {
                steps += 7
                meters += 5.25
                try line.send("ST,\(steps),\(meters)")
            }
        }
        // A → B within the batch window: the device's last reading on A may not be committed
        // when B reads its counter, so B must continue from the published one. The device
        // leaves A once A has read its last reading (it cannot be on both ports at once).
        try walk(3, on: portA)
        try await waitForPublished("SN-MOVE", steps: steps)
        try await portB.identify()
        try walk(3, on: portB)
        try await waitForCounter("SN-MOVE", steps: steps)
        // A crash while on B, then back to A: the counter comes from the store.
        process.send(SIGKILL)
        _ = try await process.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(try integrityCheck(), "ok")
        portA.drain()
        portB.drain()
        process = try healthgate.start(["run", "--config", config.path])
        try await portA.identify()
        try walk(3, on: portA)
        try await waitForCounter("SN-MOVE", steps: steps)
        try await stop(process)

        let samples = try await HealthStore(path: database, access: .readOnly).samples(of: .stepCount)
        XCTAssertEqual(samples.reduce(0) { $0 + $1.quantity.value }, Double(steps - baseline.0))
        let storedMeters = try await total(.distanceWalkingRunning)
        XCTAssertEqual(storedMeters, meters - baseline.1, accuracy: 1e-6)
        XCTAssertEqual(Set(samples.map { $0.device?.localIdentifier }), ["SN-MOVE"])
        for (previous, next) in zip(samples, samples.dropFirst()) {
            XCTAssertGreaterThanOrEqual(next.startDate, previous.endDate, "overlapping samples for one device")
        }
        XCTAssertEqual(try integrityCheck(), "ok")
    }
}
