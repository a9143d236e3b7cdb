import BLETesting
import Foundation
import GatewayTesting
import HealthDevices
import XCTest

/// The plugin's fixture files: values as `healthgate decode` prints them; every payload names
/// the test that publishes it.
typealias FixtureFile = GATTFixtureFile<[String: FixtureValue]>

extension GATTFixtureFile {
    static func load(_ name: String) throws -> Self {
        let file = try load(name, from: fixturesDirectory(besideTestsOf: #filePath))
        XCTAssertFalse(file.invalid.isEmpty, name)
        for source in file.valid.map(\.source) + file.invalid.map(\.source) {
            XCTAssertFalse(source.test?.isEmpty ?? true, "\(name): \(source.path) names no test")
        }
        return file
    }
}

/// A number, a string, a boolean or null, as a fixture writes an expected value.
enum FixtureValue: Decodable, Equatable {
    case number(Double)
    case string(String)
    case bool(Bool)
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }
}

/// Compares a report with a fixture's expected values: the same keys, numbers to 1e-9.
func assertReport(
    _ report: MeasurementReport, _ expected: [String: FixtureValue], _ name: String,
    file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertEqual(Set(report.fields.keys), Set(expected.keys), "\(name): keys", file: file, line: line)
    for (key, value) in expected {
        let actual = report[key]
        switch (actual, value) {
        case (.number(let a)?, .number(let e)): XCTAssertEqual(a, e, accuracy: 1e-9, "\(name): \(key)", file: file, line: line)
        case (.integer(let a)?, .number(let e)): XCTAssertEqual(Double(a), e, "\(name): \(key)", file: file, line: line)
        case (.string(let a)?, .string(let e)): XCTAssertEqual(a, e, "\(name): \(key)", file: file, line: line)
        case (.bool(let a)?, .bool(let e)): XCTAssertEqual(a, e, "\(name): \(key)", file: file, line: line)
        case (.null?, .null): break
        default: XCTFail("\(name): \(key) is \(String(describing: actual)), expected \(value)", file: file, line: line)
        }
    }
}
