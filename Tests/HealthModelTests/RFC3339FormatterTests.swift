import Foundation
import HealthModel
import XCTest

/// The byte formatter behind ``RFC3339/string(from:)`` and ``RFC3339/append(_:to:)``: the same
/// text as the `String`-building formatter it replaces (kept here as the reference) and as
/// Foundation's `DateFormatter`, over many dates.
final class RFC3339FormatterTests: XCTestCase {
    /// The formatter as it was written with `String` pieces: the reference for byte identity.
    static func reference(_ date: Date) -> String {
        let first: Int64 = -62_135_596_800_000_000
        let last: Int64 = 253_402_300_799_999_999
        let raw = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let micros: Int64 = raw.isNaN || raw <= Double(first) ? first : raw >= Double(last) ? last : Int64(raw)
        var seconds = micros / 1_000_000
        var fraction = micros % 1_000_000
        if fraction < 0 {
            fraction += 1_000_000
            seconds -= 1
        }
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = seconds - days * 86400
        // The calendar date is the model's (checked against DateFormatter below); the reference is
        // for the text built from it.
        let (year, month, day) = CivilDate.date(ofDay: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(fraction, 6))Z"
    }

    /// Dates at the edges (leap days, year, century and era boundaries, fractions that round up
    /// into the next second, the representable bounds and beyond) and 200 000 spread over the
    /// years 0001-9999 by a fixed generator.
    static func dates() -> [Date] {
        var seconds: [Double] = [
            0, -0.000_001, 0.000_000_4, 0.000_000_5, 0.000_000_6, -1.5, 0.999_999_5, 59.999_999_6,
            951_782_400, 951_868_799.999_999, 951_868_800,  // 2000-02-29 (divisible by 400)
            -2_203_977_600, -2_203_891_200,  // 1900-02-28, 1900-03-01 (not a leap year)
            4_107_456_000, 4_107_542_400,  // 2100-02-28, 2100-03-01
            1_709_208_000, 946_684_799.999_999, 946_684_800, 978_307_199.999_999_9, 978_307_200,
            1_800_000_000.123456, 1_800_000_000.9999996, 1_763_790_000.25, -12_219_292_800,  // 1582-10-15
            -62_135_596_800, -62_135_596_800.000_001, 253_402_300_799.999_999, 253_402_300_800, 1e20, -1e20,
            .nan, .infinity, -.infinity,
        ]
        func floorDivision(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : (a - b + 1) / b }
        func leapYears(before year: Int) -> Int {
            floorDivision(year - 1, 4) - floorDivision(year - 1, 100) + floorDivision(year - 1, 400)
        }
        for year in stride(from: 1, through: 9999, by: 7) {
            // The first second of the year and the last microsecond before it.
            let days = Double((year - 1970) * 365 + leapYears(before: year) - leapYears(before: 1970))
            seconds += [days * 86400, days * 86400 - 0.000_001]
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<200_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let micros = Int64(bitPattern: state >> 1) % 315_537_897_600_000_000 - 62_135_596_800_000_000
            seconds.append(Double(micros) / 1_000_000)
        }
        return seconds.map { Date(timeIntervalSince1970: $0) }
    }

    func testTheByteFormatterWritesWhatTheStringFormatterWrote() {
        var out: [UInt8] = Array("prefix".utf8)
        for date in Self.dates() {
            let expected = Self.reference(date)
            XCTAssertEqual(RFC3339.string(from: date), expected, "\(date.timeIntervalSince1970)")
            out.removeSubrange(6...)
            RFC3339.append(date, to: &out)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), "prefix" + expected, "\(date.timeIntervalSince1970)")
        }
    }

    /// Foundation's formatter agrees to the second, and its milliseconds are ours truncated,
    /// for dates in the Gregorian calendar proper (Foundation switches to the Julian calendar
    /// before 1582-10-15; RFC 3339 stays proleptic Gregorian). Dates are whole microseconds,
    /// so the fraction has one exact value.
    func testFoundationsFormatterAgrees() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        let gregorian = Date(timeIntervalSince1970: -12_219_292_800)
        var checked = 0
        for date in Self.dates() where date >= gregorian && RFC3339.isRepresentable(date) && checked < 50_000 {
            let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
            let whole = Date(timeIntervalSince1970: (micros / 1_000_000).rounded(.down))
            let text = RFC3339.string(from: date)
            XCTAssertEqual(String(text.prefix(19)), formatter.string(from: whole), "\(date.timeIntervalSince1970)")
            let fraction = Int64(micros) - Int64((micros / 1_000_000).rounded(.down)) * 1_000_000
            XCTAssertEqual(String(text.dropFirst(20).prefix(6)), String(format: "%06lld", fraction), "\(date.timeIntervalSince1970)")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 10_000)
    }
}
