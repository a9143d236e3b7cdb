import Foundation
import GatewayTesting
import HTTPRepository
import HealthModel
import HealthStore
import XCTest

/// End to end: the built `healthgate run` with a simulated source and this sink alone (the store
/// is then its journal, at `$STATE_DIRECTORY/samples.sqlite`), killed with SIGKILL mid-stream,
/// then started again: every record the store held unsent at the kill reaches the repository.
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
        let server = try RecordingServer.started(in: directory)
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
        guard try await runThenKill(binary, config: config, in: directory, environment: environment, until: "readings waiting in the store", {
            ((try? await Self.unsentReadings(directory)) ?? 0) >= 3
        }) else { return }
        let pending = try await Self.unsent(directory)
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
        // Nothing is stored twice: the repository accepted every sample exactly once, and every
        // version of a series once (a heartbeat or quantity series goes out once per version, as
        // it grows).
        for (uuid, count) in server.acceptedSampleCounts() {
            XCTAssertEqual(count, 1, "\(uuid) was accepted \(count) times")
        }
        var versions: [String: Int] = [:]
        for request in server.requests() where request.method == "POST" && request.status == 200 {
            for series in (request.body as? [String: Any])?["quantitySeries"] as? [[String: Any]] ?? [] {
                let version = (series["metadata"] as? [String: Any])?["syncVersion"] as? Int ?? 0
                versions["\(series["uuid"] ?? "") v\(version)", default: 0] += 1
            }
        }
        XCTAssertFalse(versions.isEmpty, "the heart rates travelled as no quantity series")
        for (version, count) in versions {
            XCTAssertEqual(count, 1, "\(version) was accepted \(count) times")
        }
    }

    /// The crash window of issue 12: the repository stored a batch (recorded it) but the gateway
    /// is killed before the 2xx arrives. After the restart the batch, rebuilt from the range
    /// committed before it was sent, goes out again as the same request: the same records under
    /// the same Idempotency-Key, so a repository that de-duplicates by key stores it once, and one
    /// that keeps the key's fingerprint (answering 422 to another payload) sees the same one. FHIR
    /// with `quantitySeries: expand` and a foot pod's distance and steps (plain samples, one a
    /// second): it carries no heartbeat series and no open quantity series, so that nothing in
    /// the range moves on (a series that grows moves to a later anchor, and a batch that lost it
    /// has another key).
    func testKillBeforeTheAnswerResendsTheSameRecordsUnderTheSameKey() async throws {
        let (binary, directory) = try prepare()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try RecordingServer.started(in: directory)
        defer { server.stop() }
        // The first request is recorded as stored, then answered only after a minute.
        try await server.control(#"{"hold": [60], "idempotency": true}"#)
        let config = try writeConfig(
            directory, server: server,
            sink: #""batchIntervalSeconds": 1.5, "batchSize": 500, "format": "fhir-r4", "patientReference": "Patient/p1", "quantitySeries": "expand""#,
            source: #""runningWindowSeconds": 1, "simulation": {"heartRateMonitors": 0, "footPods": 1}"#)
        let environment = ["STATE_DIRECTORY": directory.path, "HOME": directory.path, "PATH": "/usr/bin:/bin"]

        guard try await runThenKill(binary, config: config, in: directory, environment: environment, until: "the repository to store a batch", {
            server.requests().count >= 1
        }) else { return }
        let held = try XCTUnwrap(server.requests().first)
        let heldKey = try XCTUnwrap(held.headers["Idempotency-Key"])
        XCTAssertFalse(held.uuids.isEmpty)
        // The batch's range was committed before it was sent, and not acknowledged.
        let store = try HealthStore(path: Self.storePath(directory), access: .readOnly)
        let begun = try await store.followerBatches("repo")
        XCTAssertFalse(begun.isEmpty, "the held batch's range is not in the store")
        let cursor = try await store.follower("repo")?.anchor
        XCTAssertEqual(cursor, begun.first?.after)

        try await server.control(#"{"reset": true, "idempotency": true}"#)
        let second = try launch(
            binary, ["run", "--config", config.path, "--duration", "3"], environment: environment,
            log: directory.appendingPathComponent("second.log"))
        second.waitUntilExit()
        XCTAssertEqual(second.terminationStatus, 0)
        XCTAssertEqual(server.requests().filter { $0.status == 422 }.count, 0, "a key was reused with another payload")

        let requests = server.requests()
        let resent = requests.dropFirst().filter { !Set($0.uuids).isDisjoint(with: held.uuids) }
        XCTAssertFalse(resent.isEmpty, "the held batch was never sent again")
        for request in resent {
            XCTAssertEqual(request.headers["Idempotency-Key"], heldKey, "a record of the held batch went out under another key")
            XCTAssertEqual(Set(request.uuids), Set(held.uuids), "the resent batch does not carry exactly the held batch's records")
        }
        // Every record, whichever request carried it, carried one key only.
        var keys: [String: Set<String>] = [:]
        for request in requests {
            for uuid in request.uuids { keys[uuid, default: []].insert(request.headers["Idempotency-Key"] ?? "") }
        }
        for (uuid, seen) in keys {
            XCTAssertEqual(seen.count, 1, "\(uuid) was sent under several keys: \(seen)")
        }
        // At the graceful stop everything the store held was sent, but for the closing versions of
        // the series still open then: the store closes them as it closes, after the sink stopped,
        // and they go at the next start.
        let reader = try HealthStore(path: Self.storePath(directory), access: .readOnly)
        let last = try await reader.follower("repo")?.anchor ?? 0
        let remaining = try await reader.changes(since: last)
        XCTAssertEqual(remaining.deleted, [])
        for record in remaining.added {
            guard case .quantitySeries(let series) = record, !series.isProvisional else {
                XCTFail("\(record.kind) \(record.id) was left unsent at the graceful stop")
                continue
            }
        }
    }

    /// Issue 13: SIGTERM while the sink waits in a long backoff ends the gateway at once, with
    /// exit status 0, and the records wait in the store, the cursor before them.
    func testSIGTERMDuringABackoffStopsCleanly() async throws {
        let (binary, directory) = try prepare()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try RecordingServer.started(in: directory)
        defer { server.stop() }
        try await server.control(#"{"fail": [503, 503, 503, 503]}"#)
        let config = try writeConfig(
            directory, server: server,
            sink: #""batchIntervalSeconds": 0.05, "retry": {"initialDelaySeconds": 600, "maxDelaySeconds": 600}"#)
        let environment = ["STATE_DIRECTORY": directory.path, "HOME": directory.path, "PATH": "/usr/bin:/bin"]
        let log = directory.appendingPathComponent("run.log")
        let gateway = try launch(binary, ["run", "--config", config.path], environment: environment, log: log)
        do {
            try await waitUntil(timeout: .seconds(30), "a failed delivery (the sink backs off for 10 minutes)") {
                server.requests().contains { $0.status == 503 }
            }
        } catch {
            kill(gateway.processIdentifier, SIGKILL)
            XCTFail("\(error); the gateway logged:\n\(((try? String(contentsOf: log, encoding: .utf8)) ?? "").suffix(4000))")
            return
        }
        kill(gateway.processIdentifier, SIGTERM)
        do {
            // Far below the backoff (10 minutes) and the gateway's drain deadline.
            try await waitUntil(timeout: .seconds(5), "the gateway to exit after SIGTERM") { !gateway.isRunning }
        } catch {
            kill(gateway.processIdentifier, SIGKILL)
            XCTFail("\(error); the gateway logged:\n\(((try? String(contentsOf: log, encoding: .utf8)) ?? "").suffix(4000))")
            return
        }
        XCTAssertEqual(gateway.terminationReason, .exit)
        XCTAssertEqual(gateway.terminationStatus, 0, ((try? String(contentsOf: log, encoding: .utf8)) ?? "").suffix(4000).description)
        let unsent = try await Self.unsent(directory)
        XCTAssertFalse(unsent.isEmpty, "the undelivered records are not waiting in the store")
    }

    /// The store of a gateway whose `STATE_DIRECTORY` is `directory`.
    static func storePath(_ directory: URL) -> String { directory.appendingPathComponent("samples.sqlite").path }

    /// The readings after the `repo` sink's committed cursor: a sample one, a series its quantities.
    static func unsentReadings(_ directory: URL) async throws -> Int {
        guard FileManager.default.fileExists(atPath: storePath(directory)) else { return 0 }
        let store = try HealthStore(path: storePath(directory), access: .readOnly)
        guard let cursor = try await store.follower("repo")?.anchor else { return 0 }
        return try await store.changes(since: cursor).added.reduce(0) { total, record in
            if case .quantitySeries(let series) = record { return total + series.count }
            return total + 1
        }
    }

    /// The uuids of the records after the `repo` sink's committed cursor.
    static func unsent(_ directory: URL) async throws -> [String] {
        guard FileManager.default.fileExists(atPath: storePath(directory)) else { return [] }
        let store = try HealthStore(path: storePath(directory), access: .readOnly)
        guard let cursor = try await store.follower("repo")?.anchor else { return [] }
        return try await store.changes(since: cursor).added.map(\.id.uuidString)
    }

    private func prepare() throws -> (binary: URL, directory: URL) {
        let binary = RecordingServer.packageRoot.appendingPathComponent(".build/debug/healthgate")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw XCTSkip("\(binary.path) is not built (swift build --product healthgate)")
        }
        let plugins = try run(binary, ["plugins"])
        guard plugins.contains("http-repository"), plugins.contains("ble-heart-rate") else {
            throw XCTSkip("this healthgate binary lacks the simulated source or the http-repository sink")
        }
        let directory = try FileManager.default.url(
            for: .itemReplacementDirectory, in: .userDomainMask, appropriateFor: URL(fileURLWithPath: NSTemporaryDirectory()),
            create: true)
        return (binary, directory)
    }

    private func writeConfig(_ directory: URL, server: RecordingServer, sink: String, source: String? = nil) throws -> URL {
        let config = directory.appendingPathComponent("config.json")
        try """
            {"sources": [{"kind": "ble-heart-rate", "name": "strap", "config": {"transport": "simulated"\(source.map { ", " + $0 } ?? "")}}],
             "sinks": [{"kind": "http-repository", "name": "repo", "config": {"url": "\(server.url)", \(sink)}}],
             "controlSocket": "\(directory.path)/control.sock"}
            """.write(to: config, atomically: true, encoding: .utf8)
        return config
    }

    /// Runs the gateway with `config` (its output in `directory`'s first.log) until `condition`
    /// holds, then kills it with SIGKILL. False, with the test failed on the gateway's log, when
    /// the condition did not hold within 30 s.
    private func runThenKill(
        _ binary: URL, config: URL, in directory: URL, environment: [String: String], until what: String,
        _ condition: @Sendable () async throws -> Bool
    ) async throws -> Bool {
        let firstLog = directory.appendingPathComponent("first.log")
        let first = try launch(binary, ["run", "--config", config.path], environment: environment, log: firstLog)
        do {
            try await waitUntil(timeout: .seconds(30), what, condition)
        } catch {
            kill(first.processIdentifier, SIGKILL)
            let log = (try? String(contentsOf: firstLog, encoding: .utf8)) ?? "(no log)"
            XCTFail("\(error); the gateway logged:\n\(log.suffix(4000))")
            return false
        }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        return true
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
        try runProcessOutput(binary, arguments).output
    }
}
