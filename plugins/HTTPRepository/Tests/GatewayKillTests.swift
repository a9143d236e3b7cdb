import Foundation
import GatewayTesting
import HTTPRepository
import HealthModel
import XCTest

/// End to end: the built `healthgate run` with a simulated source and this sink, killed with
/// SIGKILL mid-stream, then started again: every record that was pending in the outbox at the
/// kill reaches the repository.
final class GatewayKillTests: XCTestCase {
    func testKillDashNineThenRestartDeliversEverythingPending() async throws {
        let binary = RecordingServer.packageRoot.appendingPathComponent(".build/debug/healthgate")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw XCTSkip("\(binary.path) is not built (swift build --product healthgate)")
        }
        let plugins = try run(binary, ["plugins"])
        guard plugins.contains("http-repository"), plugins.contains("ble-heart-rate") else {
            throw XCTSkip("this healthgate binary lacks `run` with a simulated source and the http-repository sink: "
                + "its catalog is\n\(plugins)")
        }
        let directory = try FileManager.default.url(
            for: .itemReplacementDirectory, in: .userDomainMask, appropriateFor: URL(fileURLWithPath: NSTemporaryDirectory()),
            create: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = RecordingServer(directory: directory)
        try server.start()
        defer { server.stop() }
        // 503 for the whole first run (the retries come every 100-200 ms; the monitor sends one
        // measurement a second), so records pile up in the outbox before the kill.
        let outage = Array(repeating: "503", count: 500).joined(separator: ", ")
        try await server.control(#"{"fail": ["# + outage + #"]}"#)
        let config = directory.appendingPathComponent("config.json")
        try """
            {"sources": [{"kind": "ble-heart-rate", "name": "strap", "config": {"transport": "simulated"}}],
             "sinks": [{"kind": "http-repository", "name": "repo", "config": {
                "url": "\(server.url)", "batchIntervalSeconds": 0.05,
                "retry": {"initialDelaySeconds": 0.1, "maxDelaySeconds": 0.2}}}],
             "controlSocket": "\(directory.path)/control.sock"}
            """.write(to: config, atomically: true, encoding: .utf8)
        let environment = ["STATE_DIRECTORY": directory.path, "HOME": directory.path, "PATH": "/usr/bin:/bin"]
        let outboxPath = HTTPRepositorySink.outboxPath(stateDirectory: directory, name: "repo")

        let firstLog = directory.appendingPathComponent("first.log")
        let first = try launch(binary, ["run", "--config", config.path], environment: environment, log: firstLog)
        do {
            try await waitUntil(timeout: .seconds(30), "records pending in the outbox") {
                FileManager.default.fileExists(atPath: outboxPath) && ((try? Outbox(path: outboxPath).statistics.count) ?? 0) >= 3
            }
        } catch {
            kill(first.processIdentifier, SIGKILL)
            let log = (try? String(contentsOf: firstLog, encoding: .utf8)) ?? "(no log)"
            XCTFail("\(error); the gateway logged:\n\(log.suffix(4000))")
            return
        }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let pending = try await Outbox(path: outboxPath).peek(limit: 100_000).map(\.id.uuidString)
        XCTAssertFalse(pending.isEmpty)

        try await server.control(#"{"reset": true}"#)
        let second = try launch(
            binary, ["run", "--config", config.path, "--duration", "3"], environment: environment,
            log: directory.appendingPathComponent("second.log"))
        second.waitUntilExit()
        let accepted = server.acceptedCounts()
        for uuid in pending {
            XCTAssertNotNil(accepted[uuid], "\(uuid) was pending at the kill and never delivered")
        }
        // Nothing is stored twice: the repository accepted every uuid exactly once.
        for (uuid, count) in accepted {
            XCTAssertEqual(count, 1, "\(uuid) was accepted \(count) times")
        }
    }

    private func launch(_ binary: URL, _ arguments: [String], environment: [String: String], log: URL) throws -> Process {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    private func run(_ binary: URL, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
