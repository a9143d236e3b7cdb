import Foundation
import GatewayTesting
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// Every command that talks to the daemon or opens the store takes `--config` and finds the
/// configuration's `controlSocket` and `store.path` in it, as `run` does (issue #45).
final class ConfigOptionTests: XCTestCase {
    func testCommandsReachADaemonAndAStoreTheConfigurationPlacesElsewhere() async throws {
        let healthgate = try HealthgateExecutable()
        let socket = healthgate.root.appendingPathComponent("elsewhere/control.sock")
        let store = healthgate.root.appendingPathComponent("elsewhere/samples.sqlite")
        try FileManager.default.createDirectory(at: socket.deletingLastPathComponent(), withIntermediateDirectories: true)
        let config = healthgate.root.appendingPathComponent("gateway.json")
        try """
            {"controlSocket": "\(socket.path)", "store": {"path": "\(store.path)"}}
            """.write(to: config, atomically: true, encoding: .utf8)
        let daemon = try healthgate.start(["run", "--config", config.path])
        try await waitUntil(timeout: .seconds(60), "the configured control socket") {
            FileManager.default.fileExists(atPath: socket.path)
        }

        // Without --config the commands look where the default configuration says: nobody there.
        let lost = try await healthgate.run(["status"])
        XCTAssertEqual(lost.status, 69, lost.standardError)

        for arguments in [
            ["status", "--format", "json"], ["participant", "list", "--format", "json"],
            ["workout", "status", "--format", "json"],
            ["query", "samples", "--type", "heartRate", "--format", "json"],
            ["query", "changes", "--format", "json"],
            ["dead-letters", "list"],
        ] {
            let result = try await healthgate.run(arguments + ["--config", config.path])
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.standardError)")
        }
        let status = try await healthgate.run(["status", "--config", config.path])
        XCTAssertTrue(status.standardOutput.contains(config.path), status.standardOutput)

        let missing = try await healthgate.run(["status", "--config", healthgate.root.appendingPathComponent("none.json").path])
        XCTAssertEqual(missing.status, 66, missing.standardError)

        try await daemon.terminate()
    }
}
