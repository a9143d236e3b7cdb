import Foundation
import GatewayTesting
import XCTest

/// The test runner of the real executable, which every end-to-end test uses.
final class HealthgateExecutableTests: XCTestCase {
    /// Running the executable leaves no descriptor behind in the test process: the suite runs it
    /// thousands of times, and a /proc/self/fd that grows past about 1 300 entries makes
    /// Foundation's Process.run crash on Linux.
    func testRunningTheExecutableLeavesNoDescriptorOpen() async throws {
        let healthgate = try HealthgateExecutable()
        _ = try await healthgate.run(["--help"])
        let before = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        for _ in 0..<40 {
            let result = try await healthgate.run(["--help"])
            XCTAssertEqual(result.status, 0, result.standardError)
            XCTAssertFalse(result.standardOutput.isEmpty)
        }
        let after = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        XCTAssertLessThan(after - before, 10, "descriptors before \(before), after 40 runs \(after)")
    }
}
