import Foundation
import GatewayTesting
import SQLite
import Synchronization
import XCTest

/// The built executable under a stand-in for systemd: a notification socket the test binds,
/// given in `NOTIFY_SOCKET` with `WATCHDOG_USEC`, as a unit of `Type=notify` with
/// `WatchdogSec=` gives them (udev-rules/healthgate.service).
///
/// `READY=1` comes once the store is open; `WATCHDOG=1` follows every half of `WATCHDOG_USEC`;
/// a writer made to hang from outside (another connection holding the store's write lock, so the
/// gateway's writer waits in SQLite's busy handler and its sink acknowledges nothing) stops the
/// pings once it has lasted that half (the threshold: here 2 s of a 4 s timeout), and they
/// resume when the lock goes; `STOPPING=1` comes at a graceful stop.
final class ServiceNotificationEndToEndTests: XCTestCase {
    func testReadyThenPingsWhichAHungWriterStopsAndStopping() async throws {
        var systemd = try HealthgateExecutable()
        let listener = try NotificationListener(address: systemd.root.appendingPathComponent("notify.sock").path)
        defer { listener.close() }
        systemd.environment["NOTIFY_SOCKET"] = listener.address
        systemd.environment["WATCHDOG_USEC"] = "4000000"
        let healthgate = systemd
        let database = healthgate.root.appendingPathComponent("watchdog.sqlite").path
        let daemon = try healthgate.start(["demo", "--db", database, "--quiet"])

        try await listener.wait(timeout: .seconds(60), "READY=1") { $0.contains { $0.hasPrefix("READY=1\n") } }
        XCTAssertTrue(listener.messages[0].hasPrefix("READY=1\nSTATUS=running: "), "READY=1 comes first: \(listener.messages)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: database), "ready once the store is open")
        try await listener.wait("two pings") { $0.filter { $0 == "WATCHDOG=1" }.count >= 2 }
        let running = try await Self.watchdogStatus(healthgate)
        XCTAssertEqual(running["timeoutSeconds"] as? Double, 4)
        XCTAssertGreaterThanOrEqual(running["pings"] as? Int ?? 0, 1, "\(running)")
        XCTAssertNotNil(running["lastPing"])
        let table = try await healthgate.run(["status"])
        XCTAssertTrue(table.standardOutput.contains("\nwatchdog: pinging (WatchdogSec 4 s, checked every 2 s), last ping "), table.standardOutput)

        // Hang the writer: another connection takes the write lock and keeps it.
        let lock = try SQLiteConnection(path: database)
        try lock.execute("BEGIN EXCLUSIVE")
        try await listener.wait("the pings withheld") { $0.contains { $0.hasPrefix("STATUS=watchdog pings withheld: ") } }
        let withheldAt = try XCTUnwrap(listener.messages.firstIndex { $0.hasPrefix("STATUS=watchdog pings withheld: ") })
        // Two more checks while it hangs: at each a ping would have gone, had the pipeline moved.
        let checks = Mutex<[String]>([])
        try await waitUntil(timeout: .seconds(30), "two checks while the writer hangs") {
            let status = try await Self.watchdogStatus(healthgate)
            guard status["withheld"] is String, let check = status["lastCheck"] as? String else { return false }
            return checks.withLock { checks in
                if checks.last != check { checks.append(check) }
                return checks.count >= 3
            }
        }
        let withheld = try await Self.watchdogStatus(healthgate)
        let reason = try XCTUnwrap(withheld["withheld"] as? String)
        XCTAssertTrue(
            reason.contains("the store's writer has been in one call") || reason.contains("the sink sqlite has acknowledged nothing"),
            reason)
        let stalled = try await healthgate.run(["status"])
        XCTAssertTrue(stalled.standardOutput.contains("\nwatchdog: pings WITHHELD since "), stalled.standardOutput)
        XCTAssertFalse(
            listener.messages[withheldAt...].contains("WATCHDOG=1"), "a ping while the writer hangs: \(listener.messages[withheldAt...])")

        // The lock goes: the writer commits, the sink acknowledges, the pings resume.
        try lock.execute("ROLLBACK")
        try await listener.wait("the pings resumed") { $0[withheldAt...].contains { $0.hasPrefix("WATCHDOG=1") } }

        let result = try await daemon.terminate()
        XCTAssertTrue(listener.messages.contains { $0.hasPrefix("STOPPING=1") }, "\(listener.messages)")
        XCTAssertTrue(result.standardError.contains("watchdog pings withheld"), result.standardError)
    }

    /// The `watchdog` object of `healthgate status --format json`.
    static func watchdogStatus(_ healthgate: HealthgateExecutable) async throws -> [String: Any] {
        let status = try await healthgate.run(["status", "--format", "json"])
        guard status.status == 0,
            let report = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any],
            let watchdog = report["watchdog"] as? [String: Any]
        else { throw WaitTimeout(what: "a status with a watchdog: \(status.standardOutput) \(status.standardError)") }
        return watchdog
    }
}
