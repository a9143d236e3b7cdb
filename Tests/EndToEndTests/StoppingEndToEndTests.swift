import Foundation
import GatewayTesting
import Synchronization
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// How the daemon stops, with the real executable: SIGHUP drains like SIGTERM; a second signal
/// or the shutdown deadline ends the process promptly even while the store is stuck on another
/// process's lock; the files it creates are private; and a stop leaves no write-ahead log.
final class StoppingEndToEndTests: XCTestCase {
    func testSIGHUPDrainsEverySampleAndRemovesTheSocket() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("hup.sqlite").path
        let daemon = try healthgate.start(["demo", "--db", database, "--quiet"])
        try await waitForStoredRecords(healthgate, daemon)

        daemon.send(SIGHUP)
        let result = try await daemon.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardError.contains("received SIGHUP: stopping sources and draining sinks"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: healthgate.controlSocket.path), "the socket is removed")
        // Every connection was closed: SQLite folded the log in and removed it with its index.
        for leftover in [database + "-wal", database + "-shm"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: leftover), "\(leftover) is left after the stop")
        }

        // Everything the sources published was written by the store.
        let summary = try XCTUnwrap(
            result.standardError.split(separator: "\n").last { $0.contains("stopped (records published:") },
            result.standardError)
        let published = try counts(in: summary, after: "records published: ", before: ";")
        let written = try counts(in: summary, after: "records written: ", before: ")")
        let total = published.values.reduce(0, +)
        XCTAssertGreaterThan(published["demo-heart-rate"] ?? 0, 0, String(summary))
        XCTAssertEqual(written["sqlite"], total, "every published record is stored: \(summary)")
        try await healthgate.assertHeartRatesStored(in: database)
    }

    /// A second SIGINT ends the process within 0.5 s although the store's commit waits on an
    /// exclusive lock another process holds (the requirement; the assertion allows 1 s for a
    /// loaded machine and the figure is printed).
    func testSecondSIGINTExitsPromptlyWhileTheStoreIsBlocked() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("blocked.sqlite").path
        let daemon = try healthgate.start(["demo", "--db", database, "--quiet"])
        let lock = try await blockStore(database, of: healthgate, daemon)
        defer { lock.release() }

        daemon.send(SIGINT)
        try await waitUntil(timeout: .seconds(10), "the first SIGINT to be taken") {
            daemon.standardError.contains("received SIGINT: stopping")
        }
        let (result, took) = try await timedExit(of: daemon, after: SIGINT, "second SIGINT to exit with the store blocked")
        XCTAssertEqual(result.status, 1, result.standardError)
        XCTAssertLessThan(took, .seconds(1), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: healthgate.controlSocket.path), "the socket is removed")
    }

    /// With `shutdownTimeoutSeconds: 1` and the store blocked, one SIGTERM ends the process
    /// within the timeout plus 0.5 s (the assertion allows another 0.5 s for a loaded machine).
    /// Issue 64: with the store's writer stuck on another process's lock, `status` answers at
    /// once from what was last published and says since when the store has not answered; once
    /// the lock goes, it no longer does.
    func testStatusAnswersAtOnceAndSaysSinceWhenTheStoreIsStuck() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("stuck.sqlite").path
        let daemon = try healthgate.start(["demo", "--db", database, "--quiet"])
        let lock = try await blockStore(database, of: healthgate, daemon)
        try await waitUntil(timeout: .seconds(15), "status to say the store is stuck") {
            try await healthgate.run(["status"]).standardOutput.contains("store: STUCK: not answering since")
        }
        let asked = ContinuousClock.now
        let status = try await healthgate.run(["status", "--format", "json"])
        let took = ContinuousClock.now - asked
        print("status (the command's whole run) with the store stuck: \(took)")
        XCTAssertEqual(status.status, 0, status.standardError)
        XCTAssertLessThan(took, .seconds(1))
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any])
        let since = try XCTUnwrap(json["storeStuckSince"] as? String, status.standardOutput)
        XCTAssertNotNil(json["migration"], "the migration's steps as last read")

        lock.release()
        try await waitUntil(timeout: .seconds(15), "status to stop saying the store is stuck (since \(since))") {
            let text = try await healthgate.run(["status"]).standardOutput
            return text.contains("healthgate ") && !text.contains("STUCK")
        }
        daemon.send(SIGTERM)
        let result = try await daemon.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(result.status, 0, result.standardError)
    }

    func testDeadlineForcesTheExitOnTime() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("deadline.sqlite").path
        let configuration = healthgate.root.appendingPathComponent("deadline.json")
        try Data(#"{"shutdownTimeoutSeconds": 1}"#.utf8).write(to: configuration)
        let daemon = try healthgate.start(["demo", "--db", database, "--quiet", "--config", configuration.path])
        let lock = try await blockStore(database, of: healthgate, daemon)
        defer { lock.release() }

        let (result, took) = try await timedExit(of: daemon, after: SIGTERM, "SIGTERM to exit with the store blocked and shutdownTimeoutSeconds 1")
        XCTAssertEqual(result.status, 1, result.standardError)
        XCTAssertTrue(result.standardError.contains("did not drain within"), result.standardError)
        XCTAssertLessThan(took, .milliseconds(2000), result.standardError)
    }

    /// Outside systemd, `run` creates its data and state directories 0700 and the store 0600.
    func testRunCreatesPrivateDirectoriesAndStore() async throws {
        let healthgate = try HealthgateExecutable()
        let result = try await healthgate.run(["run", "--duration", "1"])
        XCTAssertEqual(result.status, 0, result.standardError)
        for directory in ["data/healthgate", "state/healthgate"] {
            XCTAssertEqual(try mode(healthgate.root.appendingPathComponent(directory).path), 0o700, directory)
        }
        XCTAssertEqual(try mode(healthgate.defaultDatabase.path), 0o600)
    }

    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try XCTUnwrap(attributes[.posixPermissions] as? Int) & 0o777
    }

    /// Once the daemon has stored records, another process takes the store file's lock; returns
    /// that lock once the daemon holds records it cannot commit (released here if that fails).
    private func blockStore(
        _ database: String, of healthgate: HealthgateExecutable, _ daemon: HealthgateExecutable.RunningProcess
    ) async throws -> ExclusiveLock {
        try await waitForStoredRecords(healthgate, daemon)
        let lock = try ExclusiveLock(database: database)
        do {
            try await waitUntil(timeout: .seconds(30), "the other process to hold the lock") { lock.isHeld }
            try await waitForUncommittedRecords(healthgate)
        } catch {
            lock.release()
            throw error
        }
        return lock
    }

    /// Sends `signal` and waits for the daemon's exit; prints how long that took, after `what`.
    private func timedExit(
        of daemon: HealthgateExecutable.RunningProcess, after signal: Int32, _ what: String
    ) async throws -> (result: HealthgateExecutable.Result, took: Duration) {
        let sent = ContinuousClock.now
        daemon.send(signal)
        let result = try await daemon.waitForExit(timeout: .seconds(30))
        let took = ContinuousClock.now - sent
        print("\(what): \(took)")
        return (result, took)
    }

    private func waitForStoredRecords(_ healthgate: HealthgateExecutable, _ daemon: HealthgateExecutable.RunningProcess) async throws {
        try await waitUntil(timeout: .seconds(60), "the store to write records (\(daemon.standardError))") {
            guard FileManager.default.fileExists(atPath: healthgate.controlSocket.path) else { return false }
            let status = try await healthgate.run(["status", "--format", "json"])
            guard status.status == 0,
                let json = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any],
                let plugins = json["plugins"] as? [[String: Any]],
                let sqlite = plugins.first(where: { $0["kind"] as? String == "sqlite" })
            else { return false }
            // The heart-rate monitor's too: the demo's glucose meter delivers its stored records first.
            let heartRate = plugins.first { $0["kind"] as? String == "ble-heart-rate" && $0["role"] as? String == "source" }
            return (sqlite["records"] as? Int ?? 0) > 0 && (heartRate?["records"] as? Int ?? 0) > 0
        }
    }

    /// Waits until the sources have published records the store has not written: with the lock
    /// held, the store's commit is then stuck and stays so.
    private func waitForUncommittedRecords(_ healthgate: HealthgateExecutable) async throws {
        try await waitUntil(timeout: .seconds(30), "a published record the store cannot commit") {
            let status = try await healthgate.run(["status", "--format", "json"])
            guard status.status == 0,
                let json = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any],
                let plugins = json["plugins"] as? [[String: Any]]
            else { return false }
            let published = plugins.filter { $0["role"] as? String == "source" }.map { $0["records"] as? Int ?? 0 }.reduce(0, +)
            let written = plugins.first { $0["kind"] as? String == "sqlite" }?["records"] as? Int ?? 0
            return published > written
        }
    }

    /// `name N, name N` between two markers of the daemon's last log line.
    private func counts(in line: Substring, after start: String, before end: String) throws -> [String: Int] {
        let from = try XCTUnwrap(line.range(of: start)).upperBound
        let to = try XCTUnwrap(line[from...].range(of: end)).lowerBound
        var result: [String: Int] = [:]
        for entry in line[from..<to].split(separator: ",") {
            let parts = entry.split(separator: " ")
            guard parts.count == 2, let count = Int(parts[1]) else { continue }
            result[String(parts[0])] = count
        }
        return result
    }
}

/// Another process holding `BEGIN EXCLUSIVE` on a SQLite file until released: a Python helper
/// (the sqlite3 module) that keeps the transaction open until its stdin closes.
final class ExclusiveLock: Sendable {
    private let process: Process
    private let input: Pipe
    private let output = Collected()

    /// The helper's output so far.
    private final class Collected: Sendable {
        let text = Mutex("")
    }

    init(database: String) throws {
        let script = """
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
            connection.execute("BEGIN EXCLUSIVE")
            print("locked", flush=True)
            sys.stdin.read()
            """
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, database]
        input = Pipe()
        let out = Pipe()
        process.standardInput = input
        process.standardOutput = out
        out.fileHandleForReading.readabilityHandler = { [output] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            output.text.withLock { $0 += text }
        }
        try process.run()
    }

    /// Whether the helper has the lock.
    var isHeld: Bool { output.text.withLock { $0.contains("locked") } }

    /// Ends the transaction and the helper.
    func release() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
