import Foundation
import GatewayRuntime
import XCTest

/// The FoundationEssentials-only replacements the gateway's modules use for full Foundation's
/// formatting, trimming and error texts, checked against what Foundation gives (the time zones:
/// GatewayTimeTests).
final class RuntimeTextTests: XCTestCase {
    func testCFormatMatchesFoundationsFormatting() {
        let cases: [(String, [any CVarArg], String)] = [
            ("%.1f", [72.25], "72.2"), ("%.1f", [-0.05], "-0.1"), ("%.3f", [1.0005], "1.000"),
            ("%+.0f", [89.4], "+89"), ("%+.0f", [-3.6], "-4"), ("%02ld", [7], "07"),
            ("%04ld-03-01", [1972], "1972-03-01"), ("02:00:00:00:00:%02lX", [11], "02:00:00:00:00:0B"),
            ("02:00:00:00:%02X:%02lX", [UInt8(8), 1], "02:00:00:00:08:01"),
            ("%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", [Int64(2026), Int64(11), Int64(24), Int64(3), Int64(4), Int64(5)],
             "2026-11-24T03:04:05Z"),
            ("%.1f", [Double.nan], "nan"), ("no conversion", [], "no conversion"),
        ]
        for (format, arguments, expected) in cases {
            XCTAssertEqual(String(cFormat: format, arguments: arguments), expected, format)
            XCTAssertEqual(String(format: format, arguments: arguments), expected, "Foundation, \(format)")
        }
        // Longer than any first guess at a buffer.
        let long = String(repeating: "x", count: 500)
        XCTAssertEqual(String(cFormat: "%@-%.2f".replacingOccurrences(of: "%@", with: long), 1.5), long + "-1.50")
    }

    func testTrimmedAndPadded() {
        XCTAssertEqual("  Polar H10 \n\t".trimmed(), "Polar H10")
        XCTAssertEqual("Model\0\0".trimmed(where: { $0.isWhitespace || $0 == "\0" }), "Model")
        XCTAssertEqual("[::1]".trimmed(where: { $0 == "[" || $0 == "]" }), "::1")
        XCTAssertEqual(" \n ".trimmed(), "")
        XCTAssertEqual("".trimmed(), "")
        XCTAssertEqual("hr".padded(toLength: 5), "hr   ")
        XCTAssertEqual("heartRate".padded(toLength: 5), "heart")
        XCTAssertEqual("hr".padded(toLength: 5), "hr".padding(toLength: 5, withPad: " ", startingAt: 0))
    }

    func testErrorTextNamesTheFileAndTheSystemsReason() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("runtime-text-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let missing = directory.appendingPathComponent("missing.json")
        do {
            _ = try Data(contentsOf: missing)
            XCTFail("read a missing file")
        } catch {
            XCTAssertEqual(ErrorText.of(error), "\(missing.path): No such file or directory")
        }
        XCTAssertEqual(ErrorText.of(POSIXError(.EACCES)), "Permission denied")
        struct Plain: Error, CustomStringConvertible { var description: String { "plain reason" } }
        XCTAssertEqual(ErrorText.of(Plain()), "plain reason")
    }
}
