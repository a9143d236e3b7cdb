import Foundation
import HealthDevices
import XCTest

/// A fixture file of `Fixtures/`: payloads with their published sources and the values
/// `healthgate decode` prints for them.
struct FixtureFile: Decodable {
    struct Source: Decodable {
        var repository: String
        var path: String
        var test: String
    }
    struct Valid: Decodable {
        var name: String
        var source: Source
        var hex: String
        var expected: [String: FixtureValue]
    }
    struct Invalid: Decodable {
        struct Expected: Decodable {
            var code: String
            var field: String
            var offset: Int
            var needed: Int
            var available: Int
        }
        var name: String
        var source: Source
        var hex: String
        var error: Expected
    }
    var characteristic: String
    var valid: [Valid]
    var invalid: [Invalid]

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func load(_ name: String) throws -> FixtureFile {
        let file = try JSONDecoder().decode(
            FixtureFile.self, from: Data(contentsOf: directory.appendingPathComponent(name)))
        XCTAssertFalse(file.valid.isEmpty, name)
        XCTAssertFalse(file.invalid.isEmpty, name)
        for source in file.valid.map(\.source) + file.invalid.map(\.source) {
            XCTAssertFalse(source.repository.isEmpty || source.path.isEmpty || source.test.isEmpty, name)
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

/// Hex as the fixtures write it.
func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.filter { !$0.isWhitespace })
    precondition(digits.count % 2 == 0, "odd hex: \(hex)")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
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
