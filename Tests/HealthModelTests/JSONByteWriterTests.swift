import Foundation
import HealthModel
import XCTest

final class JSONByteWriterTests: XCTestCase {
    /// Every string comes back as it went in through a JSON parser, control characters included,
    /// and numbers as the values they were.
    func testStringsAndNumbersParseBackToTheirValues() throws {
        let strings = ["", "plain", "quote \" and \\ backslash", "slash / stays", "é ü 日本 🏃‍♀️", "\u{2028}\u{2029}"]
            + (0..<0x20).map { "control \(String(UnicodeScalar(UInt8($0))))." }
        let numbers: [Double] = [0, -0.0, 1, -1, 72, 0.1, 1.0 / 3, 1e-7, 123_456.789, 9_007_199_254_740_992, 1e300, -2.5e-300, .leastNonzeroMagnitude]
        var writer = JSONByteWriter()
        writer.openObject()
        writer.key("strings")
        writer.openArray()
        for text in strings { writer.string(text) }
        writer.closeArray()
        writer.key("numbers")
        writer.openArray()
        for number in numbers { try writer.number(number) }
        writer.closeArray()
        writer.key("flags")
        writer.openArray()
        writer.bool(true)
        writer.bool(false)
        writer.integer(-42)
        writer.closeArray()
        writer.closeObject()
        let text = String(decoding: writer.bytes, as: UTF8.self)
        XCTAssertFalse(writer.bytes.contains { $0 < 0x20 }, "a raw control character in \(text)")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [String: Any], text)
        XCTAssertEqual(object["strings"] as? [String], strings)
        XCTAssertEqual((object["numbers"] as? [NSNumber])?.map(\.doubleValue), numbers, text)
        XCTAssertTrue(text.hasSuffix(#""flags":[true,false,-42]}"#), text)
    }
}
