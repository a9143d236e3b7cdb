import GatewayRuntime
import XCTest

/// Text laid out for people: lines that fit a width without losing a character, numbers with a
/// fixed number of decimals.
final class TextLayoutTests: XCTestCase {
    func testWrappingKeepsEveryWordAndFitsTheWidth() {
        let wrapping = TextWrapping(width: 30, indent: 4)
        let entries = ["a.battery=87%", "a.connections=1", "adapter.default=1/1 devices, 1 link, 0 waiting, 0/30 failed attempts"]
        let lines = wrapping.lines(label: "strap: ", entries)
        XCTAssertEqual(lines, [
            "strap: a.battery=87%",
            "    a.connections=1",
            "    adapter.default=1/1",
            "    devices, 1 link, 0",
            "    waiting, 0/30 failed",
            "    attempts",
        ])
        XCTAssertTrue(lines.allSatisfy { $0.count <= 30 })
        // Nothing is lost: the words read back in order.
        XCTAssertEqual(lines.joined(separator: " ").split(separator: " ").dropFirst().joined(separator: " "),
                       entries.joined(separator: " "))
    }

    func testAWordWiderThanALineIsBrokenNotCut() {
        let lines = TextWrapping(width: 12, indent: 2).lines("id [healthgate/SIM-HRM-0001]")
        XCTAssertEqual(lines, ["id", "  [healthgat", "  e/SIM-HRM-", "  0001]"])
        XCTAssertEqual(lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(), "id[healthgate/SIM-HRM-0001]")
    }

    func testTextThatFitsStaysOneLine() {
        XCTAssertEqual(TextWrapping(width: 80, indent: 4).lines(label: "sqlite: ", ["latestAnchor=217", "transactions=8"]),
                       ["sqlite: latestAnchor=217 transactions=8"])
        XCTAssertEqual(TextWrapping(width: 80).lines(label: "only a label", []), ["only a label"])
        XCTAssertEqual(TextWrapping(width: 80).lines(""), [""])
    }

    func testFixedDecimalsRoundAHalfAwayFromZeroAndNeverShowMinusZero() {
        XCTAssertEqual(String(120.0, fractionDigits: 0), "120")
        XCTAssertEqual(String(36.8, fractionDigits: 1), "36.8")
        XCTAssertEqual(String(37, fractionDigits: 1), "37.0")
        XCTAssertEqual(String(82.5, fractionDigits: 0), "83")
        XCTAssertEqual(String(-82.5, fractionDigits: 0), "-83")
        XCTAssertEqual(String(15.918, fractionDigits: 0), "16")
        XCTAssertEqual(String(26.4217, fractionDigits: 1), "26.4")
        XCTAssertEqual(String(-0.04, fractionDigits: 1), "0.0")
        XCTAssertEqual(String(Double.nan, fractionDigits: 1), "nan")
    }
}
