import Foundation
import GatewayTime
import HealthModel
import XCTest

/// Time zones without full Foundation's `TimeZone`: zones by name from the system's tz database,
/// and the host's zone read as timedatectl reads it.
final class TimeZoneTests: XCTestCase {
    func testNamedTimeZonesComeFromTheTzDatabase() throws {
        let berlin = try XCTUnwrap(NamedTimeZone.named("Europe/Berlin"))
        XCTAssertEqual(berlin.identifier, "Europe/Berlin")
        // 2026-07-01T12:00Z is summer time in Berlin, 2026-01-01 is not.
        XCTAssertEqual(berlin.secondsFromGMT(for: Date(timeIntervalSince1970: 1_782_907_200)), 7200)
        XCTAssertEqual(berlin.secondsFromGMT(for: Date(timeIntervalSince1970: 1_767_268_800)), 3600)
        XCTAssertNotNil(NamedTimeZone.named("UTC"))
        XCTAssertNil(NamedTimeZone.named("Europe/Atlantis"))
        XCTAssertNil(NamedTimeZone.named(""))
    }

    func testTheLocalZoneNameIsReadWithoutTheTzDatabase() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("local-zone-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let localtime = directory.appendingPathComponent("localtime").path
        let timezone = directory.appendingPathComponent("timezone").path
        func resolve(_ variables: [String: String]) -> String {
            LocalTimeZoneName.resolve(variables: variables, localtime: localtime, timezoneFile: timezone)
        }
        XCTAssertEqual(resolve([:]), "UTC", "nothing to read")
        try "Europe/Lisbon\n".write(toFile: timezone, atomically: true, encoding: .utf8)
        XCTAssertEqual(resolve([:]), "Europe/Lisbon", "/etc/timezone")
        try FileManager.default.createSymbolicLink(atPath: localtime, withDestinationPath: "/usr/share/zoneinfo/America/New_York")
        XCTAssertEqual(resolve([:]), "America/New_York", "the link wins over /etc/timezone")
        XCTAssertEqual(resolve(["TZ": ":Asia/Tokyo"]), "Asia/Tokyo", "$TZ wins, with POSIX's colon")
        XCTAssertEqual(resolve(["TZ": "/etc/localtime"]), "America/New_York", "a path in $TZ is not a name")
        XCTAssertEqual(resolve(["TZ": "../../etc/passwd"]), "America/New_York", "not a zone name")
    }
}
