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
        for tool in ["/usr/bin/prometheus", "/usr/bin/promtool"] where !FileManager.default.isExecutableFile(atPath: tool) {
            XCTFail("\(tool) is missing: run scripts/install-dependencies --test (Debian's prometheus package)")
            return
        }
        let result = try await TestPython.run("Tests/Monitoring/prometheus_test.py", [executable.url.path])
        let text = result.output + result.errors
        XCTAssertEqual(result.status, 0, text)
        XCTAssertTrue(text.contains(" passed, 0 failed"), text)
        XCTAssertTrue(text.contains("PASS: Prometheus answers a query"), text)
    }
}
