import XCTest

extension HealthgateExecutable {
    /// Runs `arguments` and fails unless the command exits with `status` and its standard error
    /// contains `text` (the failure shows the whole standard error).
    public func assertRun(
        _ arguments: [String], exits status: Int32, saying text: String,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let result = try await run(arguments)
        XCTAssertEqual(result.status, status, file: file, line: line)
        XCTAssertTrue(result.standardError.contains(text), result.standardError, file: file, line: line)
    }
}
