import Foundation
import HealthModel
import XCTest

final class RFC3339Tests: XCTestCase {
    func testFormatsInUTCWithMicroseconds() {
        let rows: [(TimeInterval, String)] = [
            (0, "1970-01-01T00:00:00.000000Z"),
            (1_800_000_000.123456, "2027-01-15T08:00:00.123456Z"),
            (-1.5, "1969-12-31T23:59:58.500000Z"),
            (-14_182_940, "1969-07-20T20:17:40.000000Z"),
            (-2_208_988_800, "1900-01-01T00:00:00.000000Z"),
            (-2_203_891_200, "1900-03-01T00:00:00.000000Z"),  // 1900 is not a leap year
            (951_782_400, "2000-02-29T00:00:00.000000Z"),  // 2000 is (divisible by 400)
            (951_868_799, "2000-02-29T23:59:59.000000Z"),
            (1_709_208_000, "2024-02-29T12:00:00.000000Z"),
            (0.000_000_4, "1970-01-01T00:00:00.000000Z"),  // rounds to the microsecond
            (0.000_000_6, "1970-01-01T00:00:00.000001Z"),
            (-0.000_001, "1969-12-31T23:59:59.999999Z"),
        ]
        for (seconds, text) in rows {
            XCTAssertEqual(RFC3339.string(from: Date(timeIntervalSince1970: seconds)), text, "\(seconds)")
            XCTAssertEqual(
                RFC3339.date(from: text)?.timeIntervalSince1970 ?? .nan,
                (seconds * 1_000_000).rounded() / 1_000_000, accuracy: 1e-7, text)
        }
    }

    func testParsesOffsetsAndVariants() {
        let rows: [(String, TimeInterval)] = [
            ("2027-01-15T08:00:00Z", 1_800_000_000),
            ("2027-01-15T08:00:00.123456Z", 1_800_000_000.123456),
            ("2027-01-15T10:00:00.5+02:00", 1_800_000_000.5),
            ("2027-01-15T02:30:00-05:30", 1_800_000_000),
            ("2027-01-15T08:00:00+00:00", 1_800_000_000),
            ("2027-01-15T08:00:00-00:00", 1_800_000_000),
            ("2027-01-15t08:00:00z", 1_800_000_000),
            ("2027-01-15 08:00:00Z", 1_800_000_000),
            ("2027-01-15T08:00:00.1234567Z", 1_800_000_000.123457),  // rounded to the microsecond
            ("2027-01-15T08:00:00.1Z", 1_800_000_000.1),
            ("1970-01-01T01:00:00+01:00", 0),
            ("1969-12-31T23:00:00-01:00", 0),
            ("1969-12-31T23:59:58.5Z", -1.5),
            ("2024-02-29T12:00:00Z", 1_709_208_000),
            ("2000-02-29T00:00:00Z", 951_782_400),
        ]
        for (text, seconds) in rows {
            guard let date = RFC3339.date(from: text) else {
                XCTFail("\(text) did not parse")
                continue
            }
            XCTAssertEqual(date.timeIntervalSince1970, seconds, accuracy: 1e-7, text)
        }
    }

    func testRoundTripIsExactToTheMicrosecond() {
        var random = SystemRandomNumberGenerator()
        // From 1900 to 2100, positive and negative, at microsecond resolution.
        for _ in 0..<5_000 {
            let micros = Int64.random(in: -2_208_988_800_000_000...4_102_444_800_000_000, using: &random)
            let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
            let text = RFC3339.string(from: date)
            guard let parsed = RFC3339.date(from: text) else {
                XCTFail("\(text) did not parse")
                continue
            }
            XCTAssertEqual(parsed, date, text)
            XCTAssertEqual(RFC3339.string(from: parsed), text)
        }
    }

    func testAgreesWithFoundationCalendar() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let seconds = Int64.random(in: -2_208_988_800...4_102_444_800, using: &random)
            let date = Date(timeIntervalSince1970: Double(seconds))
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let expected = String(
                format: "%04ld-%02ld-%02ldT%02ld:%02ld:%02ld.000000Z", c.year ?? 0, c.month ?? 0, c.day ?? 0,
                c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
            XCTAssertEqual(RFC3339.string(from: date), expected)
        }
    }

    /// Out-of-range dates never trap: the formatter clamps, and the JSON encoder refuses.
    func testOutOfRangeDatesDoNotCrash() throws {
        let rows: [(TimeInterval, String)] = [
            (1e20, "9999-12-31T23:59:59.999999Z"),
            (-1e20, "0001-01-01T00:00:00.000000Z"),
            (.infinity, "9999-12-31T23:59:59.999999Z"),
            (.nan, "0001-01-01T00:00:00.000000Z"),
            (253_402_300_799, "9999-12-31T23:59:59.000000Z"),
            (-62_135_596_800, "0001-01-01T00:00:00.000000Z"),
        ]
        for (seconds, text) in rows {
            XCTAssertEqual(RFC3339.string(from: Date(timeIntervalSince1970: seconds)), text, "\(seconds)")
        }
        XCTAssertTrue(RFC3339.isRepresentable(Date(timeIntervalSince1970: 253_402_300_799)))
        XCTAssertFalse(RFC3339.isRepresentable(Date(timeIntervalSince1970: 253_402_300_800)))
        XCTAssertFalse(RFC3339.isRepresentable(Date(timeIntervalSince1970: .nan)))

        let far = Date(timeIntervalSince1970: 1e20)
        let sample = try QuantitySample(
            id: SampleIDGenerator(seed: 1).next(), type: .stepCount, quantity: Quantity(1, .count),
            start: far, end: far)
        XCTAssertThrowsError(try HealthJSON.makeEncoder().encode(sample)) { error in
            guard case .invalidValue(_, let context)? = error as? EncodingError else { return XCTFail("\(error)") }
            XCTAssertEqual(context.codingPath.last?.stringValue, "start")
            XCTAssertTrue(context.debugDescription.contains("outside the years 0001-9999"))
        }
    }

    func testRejectsGarbage() {
        let bad = [
            "",
            "hello",
            "2027-01-15",
            "2027-01-15T08:00:00",  // no offset
            "2027-01-15T08:00Z",  // no seconds
            "2027-01-15T08:00:00.Z",  // empty fraction
            "2027-01-15T08:00:00Zjunk",
            "2027-01-15T08:00:00+0200",  // offset without a colon
            "2027-01-15T08:00:00+02",
            "2027-01-15T08:00:00+02:00:00",
            "2027-01-15T08:00:00+24:00",  // offset hour out of range
            "2027-01-15T08:00:00+02:60",  // offset minute out of range
            "2027-13-01T00:00:00Z",
            "2027-00-10T00:00:00Z",
            "2027-01-00T00:00:00Z",
            "2027-01-32T00:00:00Z",
            "2027-04-31T00:00:00Z",  // April has 30 days
            "2027-02-29T00:00:00Z",  // 2027 is not a leap year
            "1900-02-29T00:00:00Z",  // nor is 1900
            "2024-02-30T00:00:00Z",
            "2027-01-15T24:00:00Z",
            "2027-01-15T08:60:00Z",
            "2027-01-15T08:00:61Z",
            "2027/01/15T08:00:00Z",
            "2027-01-15X08:00:00Z",
            " 2027-01-15T08:00:00Z",
            "2027-01-15T08:00:00Z ",
            "-027-01-15T08:00:00Z",
            "2027-1-15T08:00:00Z",
            "2027-01-15T08:00:0aZ",
        ]
        for text in bad {
            XCTAssertNil(RFC3339.date(from: text), "\"\(text)\" should not parse")
        }
    }
}
