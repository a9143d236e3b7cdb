import Foundation
import GatewayTesting
@testable import HealthModel
@testable import HealthStore
import XCTest

/// ``ZoneRules`` read from the system's tz database against zdump reading the same files and
/// ICU's copy (full Foundation's `TimeZone`) where it is the same release, and ``ZonedCalendar``
/// against Foundation's `Calendar`.
final class ZoneRulesTests: XCTestCase {
    static let zones = [
        "Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "America/Santiago",
        "Pacific/Chatham", "Africa/Casablanca", "Europe/Dublin", "America/St_Johns", "Asia/Tokyo", "UTC",
    ]

    func rules(_ name: String) throws -> ZoneRules {
        let data = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/\(name)"))
        return try ZoneRules(identifier: name, tzif: Array(data))
    }

    /// Every transition from 1990 to 2045 as zdump (glibc's tz code reading the same file, an
    /// independent reader) prints it: the offset on either side of it.
    func testOffsetsAgreeWithZdumpAtEveryTransitionFrom1990To2045() throws {
        var checked = 0
        for name in Self.zones {
            let zone = try rules(name)
            let transitions = try Self.zdump(name)
            checked += transitions.count
            for (date, offset) in transitions {
                XCTAssertEqual(zone.secondsFromGMT(for: date), offset, "\(name) at \(date), as zdump reads the file")
            }
        }
        // Kolkata, Tokyo and UTC have none in the years; the others about two a year.
        XCTAssertGreaterThan(checked, 500, "zdump's transitions read")
    }

    /// ICU's copy of the tz database (full Foundation's `TimeZone`), sampled every 6 h 17 min
    /// (every part of the day and every season): a reference only when it is the system's
    /// release. Otherwise the zones whose rules changed between the two releases differ, and only
    /// the zones where ICU agrees with zdump at every transition are compared.
    func testOffsetsAgreeWithICUFrom1990To2045() throws {
        for name in try Self.zonesWhereICUIsTheSystemsData() {
            let zone = try rules(name)
            let icu = try XCTUnwrap(TimeZone(identifier: name))
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

    /// The zones of ``zones`` whose ICU rules are the system's: all of them when ICU's tz release
    /// is the system's (`/usr/share/zoneinfo/tzdata.zi`'s version line), else those where ICU
    /// gives zdump's offsets at every transition (printed, with the releases, when some are left out).
    static func zonesWhereICUIsTheSystemsData() throws -> [String] {
        let system = try String(contentsOfFile: "/usr/share/zoneinfo/tzdata.zi", encoding: .utf8)
            .split(separator: "\n").first.map { $0.replacingOccurrences(of: "# version ", with: "") } ?? "?"
        guard TimeZone.timeZoneDataVersion != system else { return zones }
        let kept = try zones.filter { name in
            let icu = TimeZone(identifier: name)
            return try zdump(name).allSatisfy { icu?.secondsFromGMT(for: $0.date) == $0.offset }
        }
        print("ICU's tz data is \(TimeZone.timeZoneDataVersion), the system's \(system): compared with Foundation only in "
            + "\(kept.joined(separator: ", ")); left out: \(Set(zones).subtracting(kept).sorted().joined(separator: ", "))")
        return kept
    }

    /// zdump's transitions of `name` from 1990 to 2045: each instant it prints (a second before
    /// a transition and the transition) with the offset it reads there.
    static func zdump(_ name: String) throws -> [(date: Date, offset: Int)] {
        let text = try runProcessOutput(URL(fileURLWithPath: "/usr/bin/zdump"), ["-v", "-c", "1990,2045", name], mergingErrors: false).output
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "UTC")
        format.dateFormat = "EEE MMM d HH:mm:ss yyyy"
        // "Africa/Casablanca  Sun Mar 10 01:59:59 2024 UT = Sun Mar 10 02:59:59 2024 +01 isdst=0 gmtoff=3600"
        return text.split(separator: "\n").compactMap { line -> (date: Date, offset: Int)? in
            guard let equals = line.range(of: " UT = "), let gmtoff = line.range(of: "gmtoff=") else { return nil }
            let universal = line[..<equals.lowerBound].split(separator: " ", omittingEmptySubsequences: true).suffix(5)
            guard let date = format.date(from: universal.joined(separator: " ")), let offset = Int(line[gmtoff.upperBound...]) else { return nil }
            return (date, offset)
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
        for name in try Self.zonesWhereICUIsTheSystemsData() {
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
