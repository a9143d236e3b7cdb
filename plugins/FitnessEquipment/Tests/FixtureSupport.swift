import BLETesting
import FitnessEquipment
import Foundation
import GATTDecoding
import GatewayTesting
import XCTest

/// The plugin's fixture files: decoded values by key, `null` for an absent field.
typealias FixtureFile = GATTFixtureFile<[String: Double?]>

extension GATTFixtureFile {
    static func load(_ name: String) throws -> Self {
        let file = try load(name, from: fixturesDirectory(besideTestsOf: #filePath))
        XCTAssertFalse(file.invalid.isEmpty, name)
        return file
    }
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
