import Foundation
import GatewayTesting
import XCTest

/// What the end-to-end tests of `healthgate decode` read of a plugin's fixture file: each valid
/// payload as `Valid` (its name, its hex and what the test compares), each invalid one with the
/// field its error names.
struct DecodeFixtureFile<Valid: Decodable>: Decodable {
    struct Invalid: Decodable {
        struct Expected: Decodable { var field: String }
        var name: String
        var hex: String
        var error: Expected
    }
    var valid: [Valid]
    var invalid: [Invalid]

    /// The fixture file `name` in `folder`.
    static func load(_ name: String, in folder: URL) throws -> Self {
        try JSONDecoder().decode(Self.self, from: Data(contentsOf: folder.appendingPathComponent(name)))
    }

    /// Runs `healthgate decode command` on every invalid payload and asserts that each exits 65,
    /// prints nothing on its standard output and names the field in its error. Returns how many
    /// it ran.
    func assertInvalidRefused(
        by healthgate: HealthgateExecutable, command: String, file: StaticString = #filePath, line: UInt = #line
    ) async throws -> Int {
        for fixture in invalid {
            let result = try await healthgate.run(["decode", command, fixture.hex])
            XCTAssertEqual(result.status, 65, "\(command) \(fixture.name)", file: file, line: line)
            XCTAssertEqual(result.standardOutput, "", file: file, line: line)
            XCTAssertTrue(
                result.standardError.contains("field \(fixture.error.field) at offset"),
                "\(command) \(fixture.name): \(result.standardError)", file: file, line: line)
        }
        return invalid.count
    }
}
