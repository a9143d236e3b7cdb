import Foundation
@testable import HealthModel
@testable import HealthStore
import XCTest

/// ``ZoneRules`` read from the system's tz database against ICU's copy (full Foundation's
/// `TimeZone`), and ``ZonedCalendar`` against Foundation's `Calendar`.
final class ZoneRulesTests: XCTestCase {
    static let zones = [
        "Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "America/Santiago",
        "Pacific/Chatham", "Africa/Casablanca", "Europe/Dublin", "America/St_Johns", "Asia/Tokyo", "UTC",
    ]

    func rules(_ name: String) throws -> ZoneRules {
        let data = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/\(name)"))
        return try ZoneRules(identifier: name, tzif: Array(data))
    }

    func testOffsetsAgreeWithICUFrom1990To2045() throws {
        for name in Self.zones {
            let zone = try rules(name)
            let icu = try XCTUnwrap(TimeZone(identifier: name))
            // Every 6 hours and 17 minutes, so every part of the day and every season is visited.
            var seconds = 631_152_000.0  // 1990-01-01
            var checked = 0
            while seconds < 2_366_841_600 {  // 2045-01-01
                let date = Date(timeIntervalSince1970: seconds)
                if zone.secondsFromGMT(for: date) != icu.secondsFromGMT(for: date) {
                    XCTFail("\(name) at \(date): \(zone.secondsFromGMT(for: date)) against ICU's \(icu.secondsFromGMT(for: date))")
                    break
                }
                seconds += 22_620
                checked += 1
            }
            XCTAssertGreaterThan(checked, 75_000)
        }
    }

    func testFooterRulesCoverTheYearsAfterTheLastTransition() {
        let berlin = PosixTimeZoneRule("CET-1CEST,M3.5.0,M10.5.0/3")
        // 2100-03-28T01:00Z is the last Sunday of March 2100 at 02:00 CET.
        XCTAssertEqual(berlin?.offset(at: 4_109_878_799), 3600)
        XCTAssertEqual(berlin?.offset(at: 4_109_878_800), 7200)
        let sydney = PosixTimeZoneRule("AEST-10AEDT,M10.1.0,M4.1.0/3")
        XCTAssertEqual(sydney?.offset(at: 4_102_444_800), 39_600, "January is summer in Sydney")
        XCTAssertEqual(PosixTimeZoneRule("<+0530>-5:30")?.offset(at: 0), 19_800)
        XCTAssertEqual(PosixTimeZoneRule("EST5EDT")?.offset(at: 4_118_000_000), -14_400, "US rule by default")
        for bad in ["", "C-1", "CET", "CET-1CEST,M13.1.0,M10.5.0", "CET-1CEST,M3.5.0", "<+03-3", "CET-1CEST,M3.5.0,M10.5.0/200"] {
            XCTAssertNil(PosixTimeZoneRule(bad), bad)
        }
    }

    func testBadFilesAreRefusedWithAReason() throws {
        var data = Array(try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Europe/Berlin")))
        XCTAssertThrowsError(try ZoneRules(identifier: "x", tzif: Array(data.prefix(30))))
        XCTAssertThrowsError(try ZoneRules(identifier: "x", tzif: Array("not a zone".utf8)))
        data[0] = UInt8(ascii: "X")
        XCTAssertThrowsError(try ZoneRules(identifier: "x", tzif: data)) { error in
            XCTAssertEqual(String(describing: error), "not a valid TZif file: no TZif magic")
        }
    }

    func testCalendarArithmeticAgreesWithFoundation() throws {
        for name in Self.zones {
            let zoned = ZonedCalendar(zone: try rules(name))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = try XCTUnwrap(TimeZone(identifier: name))
            var seconds = 1_767_225_600.0  // 2026-01-01
            while seconds < 1_830_297_600 {  // 2028-01-01
                let date = Date(timeIntervalSince1970: seconds)
                for component in [Calendar.Component.minute, .hour, .day, .month] {
                    XCTAssertEqual(
                        zoned.start(of: component, containing: date), calendar.dateInterval(of: component, for: date)?.start,
                        "\(name) start of \(component) for \(date)")
                }
                let midnight = calendar.startOfDay(for: date)
                for (component, value) in [(Calendar.Component.day, 1), (.day, 7), (.day, -3), (.month, 1), (.month, -2), (.hour, 5)] {
                    XCTAssertEqual(
                        zoned.date(byAdding: component, value: value, to: midnight),
                        calendar.date(byAdding: component, value: value, to: midnight),
                        "\(name): \(value) \(component) from \(midnight)")
                }
                seconds += 86_400 * 3 + 3_700
            }
        }
    }
}
