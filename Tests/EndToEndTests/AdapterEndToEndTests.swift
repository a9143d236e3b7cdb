import Foundation
import GatewayTesting
import XCTest

/// Issue 79 through the real executable: an adapter that is no part of the package (the cuff-csv
/// example, copied into a folder of its own and run from there) feeds a gateway whose store,
/// HTTP repository and MQTT broker take its readings; its readings are attributed and queried;
/// the adapter is killed with SIGKILL, then the gateway is, each in the middle of an export
/// file, and afterwards every reading is stored exactly once and delivered to both receivers.
/// And `healthgate adapter check` passes the example and fails, each with its reason, an adapter
/// that sends a wrong unit, one with unstable identifiers and one that ignores its checkpoint.
final class AdapterEndToEndTests: TemporaryDirectoryTestCase {
    override class var directoryPrefix: String { "healthgate-adapter-e2e" }

    /// An export of `rows` readings of cuff `serial`, every 30 minutes from `start` (ISO date).
    private func export(serial: String, rows: Int, startingAt start: Date) -> String {
        var text = "Serial,Measured,Systolic (mmHg),Diastolic (mmHg),Pulse (bpm)\n"
        let formatter = ISO8601DateFormatter()
        for index in 0..<rows {
            let measured = formatter.string(from: start.addingTimeInterval(Double(index) * 1800))
            text += "\(serial),\(measured),\(110 + index % 40),\(70 + index % 20),\(55 + index % 30)\n"
        }
        return text
    }

    func testAnAdapterOutsideThePackageSurvivesKillsOfItselfAndOfTheGatewayWithNothingLostOrStoredTwice() async throws {
        let healthgate = try HealthgateExecutable()
        let receivers = try await RecordingReceivers.started(in: directory)
        defer { receivers.stop() }
        // The adapter as a user has it: a folder of its own, outside the package.
        let adapter = directory.appendingPathComponent("cuff-adapter")
        let exports = directory.appendingPathComponent("exports")
        try FileManager.default.createDirectory(at: adapter, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: exports, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: HealthgateExecutable.packageRoot().appendingPathComponent("examples/adapters/cuff-csv/cuff_csv.py"),
            to: adapter.appendingPathComponent("cuff_csv.py"))
        let database = directory.appendingPathComponent("store.sqlite").path
        let config = directory.appendingPathComponent("config.json")
        try """
            {"gatewayName": "clinic",
             "participants": [{"name": "Ana", "devices": ["BP-7741"]}],
             "sources": [{"kind": "exec", "name": "clinic-cuff", "config": {
                "command": ["python3", "cuff_csv.py"], "directory": "\(adapter.path)",
                "adapter": {"folder": "\(exports.path)", "pollSeconds": 0.2}}}],
             "store": {"path": "\(database)"},
             "sinks": [{"kind": "sqlite", "config": {"batchWindowSeconds": 1}},
                       {"kind": "http-repository", "name": "repo", "config": {"url": "\(receivers.server.url)", "batchIntervalSeconds": 0.2}},
                       {"kind": "mqtt", "name": "broker", "config": {"host": "127.0.0.1", "port": \(receivers.broker.port)}}]}
            """.write(to: config, atomically: true, encoding: .utf8)
        let start = try XCTUnwrap(ISO8601DateFormatter().date(from: "2026-08-01T00:00:00Z"))
        let files = [
            ("a.csv", export(serial: "BP-7741", rows: 1500, startingAt: start)),
            ("b.csv", export(serial: "BP-9012", rows: 1500, startingAt: start)),
            ("c.csv", export(serial: "BP-7741", rows: 1500, startingAt: start.addingTimeInterval(1500 * 1800))),
        ]
        let rows = 4500

        @Sendable func sourceRecords() async throws -> Int {
            try await Task.sleep(for: .milliseconds(100))
            let status = try await healthgate.run(["status", "--config", config.path])
            let line = status.standardOutput.split(separator: "\n").first { $0.hasPrefix("clinic-cuff ") } ?? ""
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).first ?? "") ?? 0
        }
        @Sendable func adapterPID() async throws -> Int32? {
            try await Task.sleep(for: .milliseconds(100))
            let status = try await healthgate.run(["status", "--config", config.path])
            guard let range = status.standardOutput.range(of: #"pid=\d+"#, options: .regularExpression) else { return nil }
            return Int32(status.standardOutput[range].dropFirst(4))
        }
        @Sendable func stored(_ sql: String) throws -> Int {
            usleep(50_000)
            let result = try runProcessOutput(URL(fileURLWithPath: "/usr/bin/sqlite3"), [database, sql])
            return Int(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }

        var gateway = try await healthgate.startServing(["run", "--config", config.path])
        // 1. The adapter is killed once it has sent the first file, before its checkpoint can be
        //    committed (the store's window is 1 s): restarted, it sends the file again.
        try Data(files[0].1.utf8).write(to: exports.appendingPathComponent(files[0].0))
        try await waitUntil(timeout: .seconds(60), "the adapter to send the first file") { try await sourceRecords() >= 3000 }
        let pid = try await adapterPID()
        let first = try XCTUnwrap(pid)
        kill(first, SIGKILL)
        try Data(files[1].1.utf8).write(to: exports.appendingPathComponent(files[1].0))
        try await waitUntil(timeout: .seconds(60), "the restarted adapter") { try await adapterPID().map { $0 != first } ?? false }
        // 2. The gateway is killed in the middle of the third file.
        try await waitUntil(timeout: .seconds(90), "the second file stored") { try stored("SELECT count(*) FROM correlations") >= 3000 }
        try Data(files[2].1.utf8).write(to: exports.appendingPathComponent(files[2].0))
        try await waitUntil(timeout: .seconds(60), "the third file begun") { try stored("SELECT count(*) FROM correlations") > 3000 }
        gateway.send(SIGKILL)
        let storedAtKill = try stored("SELECT count(*) FROM correlations")
        let killed = try await gateway.waitForExit()
        XCTAssertTrue(killed.standardError.contains("the adapter was killed by signal 9 (SIGKILL)"), "the adapter's kill is logged")
        gateway = try await healthgate.startServing(["run", "--config", config.path])
        try await waitUntil(timeout: .seconds(120), "every row stored") { try stored("SELECT count(*) FROM correlations") >= rows }
        let correlationUUIDs = try runProcessOutput(
            URL(fileURLWithPath: "/usr/bin/sqlite3"), [database, "SELECT lower(hex(uuid)) FROM correlations"]
        ).output.split(separator: "\n").map(String.init)
        // Every record the store holds reaches both receivers (at least once).
        try await waitUntil(timeout: .seconds(120), "the receivers to get every reading") {
            let http = Set(receivers.server.requests().flatMap(\.recordUUIDs).map { $0.replacingOccurrences(of: "-", with: "") })
            let mqtt = Set(receivers.recorder.messages.flatMap(\.uuids).map { $0.lowercased().replacingOccurrences(of: "-", with: "") })
            return Set(correlationUUIDs).isSubset(of: http) && Set(correlationUUIDs).isSubset(of: mqtt)
        }
        // The third file's checkpoint comes after its last row: killed in its middle, the gateway
        // hands the restarted adapter the second file's, and the rows stored before the kill come
        // again and are ignored.
        let status = try await healthgate.run(["status", "--config", config.path]).standardOutput
        let ignored = status.range(of: #"duplicatesIgnored=\d+"#, options: .regularExpression).map { Int(status[$0].dropFirst(18)) ?? 0 } ?? 0
        if storedAtKill < rows {
            XCTAssertGreaterThan(ignored, 0, "the rows stored before the kill were sent again and ignored: \(status)")
        }
        try await gateway.terminate()

        XCTAssertEqual(try stored("SELECT count(*) FROM correlations"), rows, "each row once")
        XCTAssertEqual(try stored("SELECT count(DISTINCT sync_identifier) FROM correlations"), rows)
        let query = try await healthgate.run(["query", "samples", "--type", "heartRate", "--format", "json", "--config", config.path])
        XCTAssertEqual(query.status, 0, query.standardError)
        let pulses = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(query.standardOutput.utf8)) as? [[String: Any]])
        XCTAssertEqual(pulses.count, rows, "each pulse once")
        let anas = try await healthgate.run(
            ["query", "samples", "--type", "bloodPressureSystolic", "--participant", "Ana", "--format", "json", "--config", config.path])
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(anas.standardOutput.utf8)) as? [Any])?.count, 3000, "BP-7741 is Ana's")
        XCTAssertTrue(gateway.standardError.contains("the adapter cuff-csv 1.0 speaks protocol 1"), gateway.standardError)
    }

    func testTheCheckPassesTheExampleAndFailsEachBrokenAdapterWithItsReason() async throws {
        let healthgate = try HealthgateExecutable()
        let fixtures = HealthgateExecutable.packageRoot().appendingPathComponent("Tests/Fixtures/adapters")
        let cases: [([String], Int32, String)] = [
            ([], 0, "adapter check: all 7 checks passed"),
            (["--wrong-unit"], 1, #"FAIL  units and types accepted: 9 of 10 readings refused: line 3 (scale-1/0): unit "count/min" does not fit bodyMass"#),
            (["--unstable-ids"], 1, "FAIL  identifiers stable across a restart: unstable identifier: the same reading had id"),
            (["--ignores-checkpoint"], 1, #"FAIL  resumes from its checkpoint: ignores its checkpoint: given {"sent":5}, it sent again 5 of the 5 readings the checkpoint covers"#),
        ]
        for (flaw, status, expected) in cases {
            let script = "scale.py \(flaw.joined(separator: " "))"
            let result = try await healthgate.run(
                ["adapter", "check", "--seconds", "10", "--", "python3", fixtures.appendingPathComponent("scale.py").path] + flaw)
            XCTAssertEqual(result.status, status, "\(script): \(result.standardOutput)\(result.standardError)")
            XCTAssertTrue(result.standardOutput.contains(expected), "\(script): \(result.standardOutput)")
        }
        // The Python example, from its own folder, with its sample exports.
        let exports = directory.appendingPathComponent("exports")
        try FileManager.default.copyItem(
            at: HealthgateExecutable.packageRoot().appendingPathComponent("examples/adapters/cuff-csv/sample-exports"), to: exports)
        let check = directory.appendingPathComponent("check.json")
        try #"{"folder": "\#(exports.path)", "pollSeconds": 0.2}"#.write(to: check, atomically: true, encoding: .utf8)
        let example = HealthgateExecutable.packageRoot().appendingPathComponent("examples/adapters/cuff-csv/cuff_csv.py")
        let result = try await healthgate.run(["adapter", "check", "--config", check.path, "--", "python3", example.path])
        XCTAssertEqual(result.status, 0, result.standardOutput + result.standardError)
        XCTAssertTrue(result.standardOutput.contains("PASS  identifiers stable across a restart: 13 readings sent again after the restart"), result.standardOutput)
    }
}
