import Foundation
import GatewayTesting
import XCTest

/// The built `healthgate run` maps libcurl only when an `http-repository` sink is configured:
/// read from the running process's /proc/PID/maps (proc(5)).
final class LibcurlMappingTests: XCTestCase {
    func testLibcurlIsMappedOnlyByAGatewayWithAnHTTPRepositorySink() async throws {
        let executable = try HealthgateExecutable()
        defer { try? FileManager.default.removeItem(at: executable.root) }
        let server = try RecordingServer.started(in: executable.root)
        defer { server.stop() }
        let database = executable.root.appendingPathComponent("samples.sqlite").path
        let source = #"{"kind": "ble-heart-rate", "name": "strap", "config": {"transport": "simulated"}}"#
        let sqlite = #"{"kind": "sqlite"}"#
        let repository = #"{"kind": "http-repository", "name": "repo", "config": {"url": "\#(server.url)", "batchIntervalSeconds": 0}}"#

        // Without the HTTP sink: once a reading is stored every plugin runs, and libcurl is absent.
        let plain = try start(executable, name: "plain", sources: [source], sinks: [sqlite])
        try await waitUntil(timeout: .seconds(30), "a reading stored by the SQLite sink") {
            try Self.storedSamples(database) > 0
        }
        XCTAssertTrue(plain.isRunning, plain.standardError)
        XCTAssertEqual(try mappedLibcurl(pid: plain.pid), [])
        plain.send(SIGINT)
        let plainResult = try await plain.waitForExit()
        XCTAssertEqual(plainResult.status, 0, plainResult.standardError)

        // With it: libcurl is loaded when the sink starts, and the sink delivers through it.
        let withHTTP = try start(executable, name: "with-http", sources: [source], sinks: [sqlite, repository])
        try await waitUntil(timeout: .seconds(30), "a record delivered to the repository") {
            !server.acceptedCounts().isEmpty
        }
        XCTAssertFalse(try mappedLibcurl(pid: withHTTP.pid).isEmpty, "the HTTP sink delivered without libcurl mapped?")
        withHTTP.send(SIGINT)
        let httpResult = try await withHTTP.waitForExit()
        XCTAssertEqual(httpResult.status, 0, httpResult.standardError)
    }

    private func start(
        _ executable: HealthgateExecutable, name: String, sources: [String], sinks: [String]
    ) throws -> HealthgateExecutable.RunningProcess {
        let config = executable.root.appendingPathComponent("\(name).json")
        try """
            {"sources": [\(sources.joined(separator: ", "))], "sinks": [\(sinks.joined(separator: ", "))],
             "store": {"path": "\(executable.root.appendingPathComponent("samples.sqlite").path)"},
             "controlSocket": "\(executable.root.path)/\(name).sock"}
            """.write(to: config, atomically: true, encoding: .utf8)
        return try executable.start(["run", "--config", config.path])
    }

    /// The distinct libcurl files mapped into process `pid`.
    private func mappedLibcurl(pid: Int32) throws -> Set<String> {
        // FileHandle, not String(contentsOfFile:), which returns only the first page of a /proc file.
        let file = try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/\(pid)/maps"), "process \(pid) is gone")
        defer { try? file.close() }
        let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        return Set(maps.split(separator: "\n").compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init)
        }.filter { $0.contains("libcurl") })
    }

    /// Rows in the SQLite store's `samples` table, through the sqlite3 command-line shell.
    private static func storedSamples(_ database: String) throws -> Int {
        guard FileManager.default.fileExists(atPath: database) else { return 0 }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        // The strap's heart rates are quantity series, its RR intervals heartbeat series.
        process.arguments = [database, "SELECT (SELECT count(*) FROM samples) + (SELECT count(*) FROM quantity_series)"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}
