import Foundation
import GatewayTesting
import XCTest

/// `GET /metrics` end to end (Tests/Monitoring/prometheus_test.py): the built `healthgate run`
/// with simulated straps, the store and a lagging MQTT follower; Debian's `promtool check
/// metrics` finds the exposition clean, and a real Prometheus scrapes the gateway and answers
/// queries about its records, their rate and the follower's lag.
final class MetricsEndToEndTests: XCTestCase {
    func testPromtoolAndARealPrometheus() async throws {
        let executable = try HealthgateExecutable()
        let root = HealthgateExecutable.packageRoot()
        let python = root.appendingPathComponent(".build/pyenv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            XCTFail("the test's virtual environment is missing: run scripts/install-test-python")
            return
        }
        for tool in ["/usr/bin/prometheus", "/usr/bin/promtool"] where !FileManager.default.isExecutableFile(atPath: tool) {
            XCTFail("\(tool) is missing: run scripts/install-dependencies (Debian's prometheus package)")
            return
        }
        let process = Process()
        process.executableURL = python
        process.arguments = [root.appendingPathComponent("Tests/Monitoring/prometheus_test.py").path, executable.url.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Read and waited for on a thread of its own, never on the cooperative pool.
        let data = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: data)
            }
        }
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertTrue(text.contains(" passed, 0 failed"), text)
        XCTAssertTrue(text.contains("PASS: Prometheus answers a query"), text)
    }
}
