import FitnessEquipment
import Foundation
import XCTest
import GATTDecoding

/// A fixture file of `Fixtures/`: payloads with their sources and expected values.
struct FixtureFile: Decodable {
    struct Source: Decodable {
        var repository: String
        var path: String
    }
    struct Valid: Decodable {
        var name: String
        var source: Source
        var hex: String
        var expected: [String: Double?]
        var extra: [String: Double?]?
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
    var valid: [Valid]
    var invalid: [Invalid]

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func load(_ name: String) throws -> FixtureFile {
        let file = try JSONDecoder().decode(
            FixtureFile.self, from: Data(contentsOf: directory.appendingPathComponent(name)))
        XCTAssertFalse(file.valid.isEmpty, name)
        XCTAssertFalse(file.invalid.isEmpty, name)
        for fixture in file.valid {
            XCTAssertFalse(fixture.source.repository.isEmpty || fixture.source.path.isEmpty, fixture.name)
        }
        return file
    }
}

/// Hex as the fixtures write it: digits with optional spaces.
func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.filter { !$0.isWhitespace })
    precondition(digits.count % 2 == 0, "odd hex: \(hex)")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// Compares decoded values with a fixture's, key by key, to 1e-9.
func assertValues(
    _ actual: [String: Double?], _ expected: [String: Double?], _ name: String,
    file: StaticString = #filePath, line: UInt = #line
) {
    for (key, value) in expected {
        guard let decoded = actual[key] else {
            XCTFail("\(name): no decoded key \(key)", file: file, line: line)
            continue
        }
        switch (decoded, value) {
        case (nil, nil): break
        case (let a?, let b?): XCTAssertEqual(a, b, accuracy: 1e-9, "\(name): \(key)", file: file, line: line)
        default: XCTFail("\(name): \(key) is \(String(describing: decoded)), expected \(String(describing: value))", file: file, line: line)
        }
    }
}

/// Checks a typed error against a fixture's expectation.
func check(_ error: any Error, _ expected: FixtureFile.Invalid.Expected, _ name: String) {
    guard let error = error as? FitnessDecodingError else { return XCTFail("\(name): \(error)") }
    XCTAssertEqual(error.code.rawValue, expected.code, name)
    XCTAssertEqual(error.field, expected.field, name)
    XCTAssertEqual(error.offset, expected.offset, name)
    XCTAssertEqual(error.needed, expected.needed, name)
    XCTAssertEqual(error.available, expected.available, name)
    XCTAssertTrue(error.description.contains(error.field), error.description)
}

/// Every proper prefix of `payload` fails with a `.truncated` error that points inside the
/// prefix and names a field, except prefixes that only cut bytes after the announced fields
/// (which the decoders ignore): those must decode to the same value as the whole payload.
/// Returns the failures as text, so that callers iterating over thousands of payloads assert once.
func truncationFailures<T: Equatable>(
    _ payload: [UInt8], _ name: String, _ decode: ([UInt8]) throws(FitnessDecodingError) -> T
) -> [String] {
    var failures: [String] = []
    let whole = try? decode(payload)
    for length in 0..<payload.count {
        do {
            let value = try decode(Array(payload.prefix(length)))
            if value != whole { failures.append("\(name): prefix of \(length) byte(s) decoded to \(value)") }
        } catch {
            if error.code != .truncated || error.offset + error.available != length || error.needed <= error.available
                || error.field.isEmpty
            {
                failures.append("\(name)/\(length): \(error)")
            }
        }
    }
    return failures
}
