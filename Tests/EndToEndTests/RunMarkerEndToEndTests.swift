import Foundation
import GatewayTesting
import XCTest

/// The built executable says after a restart how its previous run ended: a fatal signal (sent
/// here, as a crash would raise it) is named with its time, SIGKILL shows as an unclean end, and
/// a clean stop leaves nothing to say. Swift's backtracer, which the crash mark hands the signal
/// to, still reports the crash.
final class RunMarkerEndToEndTests: XCTestCase {
    func testStatusAfterARestartSaysWhetherAndWhenThePreviousRunCrashed() async throws {
        let healthgate = try HealthgateExecutable()
        defer { try? FileManager.default.removeItem(at: healthgate.root) }

        var daemon = try healthgate.start(["run"])
        var status = try await Self.waitForStatus(healthgate)
        XCTAssertNil(status["previousRun"], "a first run has no previous one")
        let crashedPID = Int(daemon.pid)
        let beforeCrash = Date()
        daemon.send(SIGSEGV)
        // Foundation's Process has been seen to leave a daemon killed this way unreaped (a
        // zombie, isRunning still true), so the end is read from the process itself: gone or a
        // zombie, and Swift's backtracer, which the crash mark handed the signal to, has
        // reported it.
        let crashed = daemon
        try await waitUntil(timeout: .seconds(60), "the crashed daemon to end") {
            Self.hasEnded(crashed.pid) && crashed.standardError.contains("Program crashed")
        }

        daemon = try healthgate.start(["run"])
        status = try await Self.waitForStatus(healthgate)
        let previous = try XCTUnwrap(status["previousRun"] as? [String: Any], "\(status)")
        XCTAssertEqual(previous["ended"] as? String, "crash")
        XCTAssertEqual(previous["signal"] as? String, "SIGSEGV")
        XCTAssertEqual(previous["pid"] as? Int, crashedPID)
        let crashedAt = try XCTUnwrap((previous["crashedAt"] as? String).flatMap(Self.date), "\(previous)")
        XCTAssertEqual(crashedAt.timeIntervalSince(beforeCrash), 0, accuracy: 30)
        let table = try await healthgate.run(["status"])
        XCTAssertTrue(table.standardOutput.contains("previous run: crashed (SIGSEGV) at "), table.standardOutput)

        daemon.send(SIGKILL)
        _ = try await daemon.waitForExit(timeout: .seconds(60))
        daemon = try healthgate.start(["run"])
        status = try await Self.waitForStatus(healthgate)
        let killed = try XCTUnwrap(status["previousRun"] as? [String: Any], "\(status)")
        XCTAssertEqual(killed["ended"] as? String, "unclean")
        XCTAssertNil(killed["signal"])

        daemon.send(SIGTERM)
        let stop = try await daemon.waitForExit(timeout: .seconds(60))
        XCTAssertEqual(stop.status, 0, stop.standardError)
        daemon = try healthgate.start(["run"])
        status = try await Self.waitForStatus(healthgate)
        XCTAssertNil(status["previousRun"], "a clean stop leaves nothing: \(status)")
        daemon.send(SIGTERM)
        _ = try await daemon.waitForExit(timeout: .seconds(60))
    }

    /// An RFC 3339 time, with or without fractional seconds.
    private static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions.insert(.withFractionalSeconds)
        return formatter.date(from: text)
    }

    /// Whether process `pid` is gone or a zombie (proc(5), the state field of /proc/PID/stat).
    private static func hasEnded(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return true }
        return stat[stat.index(after: end)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    /// `status --format json` once the daemon answers.
    private static func waitForStatus(_ healthgate: HealthgateExecutable) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let result = try await healthgate.run(["status", "--format", "json"])
            if result.status == 0,
                let status = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
            {
                return status
            }
            guard ContinuousClock.now < deadline else { throw WaitTimeout(what: "the daemon's status: \(result.standardError)") }
        }
    }
}
