import Foundation
import LineScaleKit
import XCTest
import HealthgateAdapter

final class LineScaleConfigurationTests: XCTestCase {
    private static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")

    private func decode(_ json: String) throws -> LineScaleConfiguration {
        try LineScaleConfiguration.decoded(from: try ConfigurationJSONParser.parse(Array(json.utf8)))
    }

    private func assertRefused(_ json: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let configuration = try decode(json)
            XCTFail("decoded \(configuration)", file: file, line: line)
        } catch {
            XCTAssertEqual("\(error)", expected, file: file, line: line)
        }
    }

    func testDefaults() throws {
        XCTAssertEqual(
            try decode(#"{"path": "/dev/ttyUSB0", "serial": "SC-1001"}"#),
            LineScaleConfiguration(path: "/dev/ttyUSB0", serial: "SC-1001", model: "LS-300", follow: true))
        XCTAssertEqual(
            try decode(#"{"path": "/srv/w.txt", "serial": "SC-1001", "model": "LS-600", "follow": false}"#),
            LineScaleConfiguration(path: "/srv/w.txt", serial: "SC-1001", model: "LS-600", follow: false))
    }

    func testRefused() {
        assertRefused(#"{"path": "/dev/ttyUSB0", "serial": "SC-1001", "folow": false}"#, #"unknown key "folow"; did you mean "follow"?"#)
        assertRefused(#"{"path": "/dev/ttyUSB0"}"#, #"required key "serial" is missing"#)
        assertRefused(#"{"serial": "SC-1001"}"#, #"required key "path" is missing"#)
        assertRefused(#"{"path": "weighings.txt", "serial": "SC-1001"}"#, #"path: must be an absolute path, got "weighings.txt""#)
        assertRefused(#"{"path": "/dev/ttyUSB0", "serial": ""}"#, "serial: must have 1 to 128 characters")
        assertRefused(#"{"path": "/dev/ttyUSB0", "serial": "SC-1001", "follow": "yes"}"#, #"follow: expected true or false, got the string "yes""#)
    }

    /// sample/check.json is a configuration this adapter takes.
    func testTheSampleCheckFile() throws {
        let bytes = try Data(contentsOf: Self.folder.appendingPathComponent("sample/check.json"))
        let configuration = try LineScaleConfiguration.decoded(from: try ConfigurationJSONParser.parse(Array(bytes)))
        XCTAssertEqual(configuration.serial, "SC-1001")
    }

    /// The README's table of keys is the declarations': a key added, renamed or removed in one
    /// place and not the other fails here.
    func testTheReadmeListsEveryKey() throws {
        let readme = try String(contentsOf: Self.folder.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try XCTUnwrap(readme.components(separatedBy: "\n## Configuration\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        let rows = section.split(separator: "\n").filter { $0.hasPrefix("| `") }
        let documented = rows.compactMap { $0.split(separator: "`").dropFirst().first.map(String.init) }
        XCTAssertEqual(documented, LineScaleConfiguration.configurationKeys.map(\.name))
        // Each optional key's default is in its row.
        guard case .object(let object) = LineScaleConfiguration.configurationSchema else { return XCTFail("no object") }
        for property in object.properties {
            guard let value = property.defaultValue, let row = rows.first(where: { $0.hasPrefix("| `\(property.name)`") }) else { continue }
            let text = switch value {
            case .string(let text): "\"\(text)\""
            case .bool(let flag): "\(flag)"
            default: "\(value)"
            }
            XCTAssert(row.contains("`\(text)`"), "the row of \(property.name) has its default \(text): \(row)")
        }
    }
}

final class ResumeTests: XCTestCase {
    func testTheCheckpointsState() throws {
        XCTAssertEqual(LineScaleCheckpoint(offset: 315).state, ["offset": 315])
        XCTAssertEqual(try LineScaleCheckpoint.resuming(from: ["offset": 315]), LineScaleCheckpoint(offset: 315))
        XCTAssertNil(try LineScaleCheckpoint.resuming(from: nil))
        XCTAssertThrowsError(try LineScaleCheckpoint.resuming(from: ["done": ["a.csv"]]))
        XCTAssertThrowsError(try LineScaleCheckpoint.resuming(from: ["offset": -1]))
        XCTAssertThrowsError(try LineScaleCheckpoint.resuming(from: ["offset": 1.5]))
    }

    func testResumePoint() {
        let newline: UInt8 = 0x0A
        XCTAssertEqual(ResumePoint.resuming(nil, fileSize: 500, byteBeforeOffset: nil), ResumePoint(offset: 0))
        XCTAssertEqual(ResumePoint.resuming(LineScaleCheckpoint(offset: 0), fileSize: 0, byteBeforeOffset: nil), ResumePoint(offset: 0))
        XCTAssertEqual(ResumePoint.resuming(LineScaleCheckpoint(offset: 315), fileSize: 500, byteBeforeOffset: newline), ResumePoint(offset: 315))
        XCTAssertEqual(ResumePoint.resuming(LineScaleCheckpoint(offset: 315), fileSize: 315, byteBeforeOffset: newline), ResumePoint(offset: 315), "at the end")
        let shorter = ResumePoint.resuming(LineScaleCheckpoint(offset: 315), fileSize: 100, byteBeforeOffset: nil)
        XCTAssertEqual(shorter.offset, 0)
        XCTAssertNotNil(shorter.problem)
        let rewritten = ResumePoint.resuming(LineScaleCheckpoint(offset: 315), fileSize: 500, byteBeforeOffset: UInt8(ascii: "g"))
        XCTAssertEqual(rewritten.offset, 0)
        XCTAssertNotNil(rewritten.problem)
    }
}
