import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// `healthgate query` run as a user runs it: the built executable against a real store file.
final class QueryCommandTests: StoreTestCase {
    func healthgate(_ arguments: String...) throws -> ProcessResult {
        try runHealthgate(["query"] + arguments)
    }

    override func setUp() async throws {
        try await super.setUp()
        let ids = makeIDs()
        try await HealthStore(path: path).write([
            .quantity(try heartRate(ids, 60, at: 10)), .quantity(try heartRate(ids, 80, at: 20)),
            .quantity(try heartRate(ids, 90, at: 190)),
            .quantity(try steps(ids, 120, from: 3000, to: 4200)),  // 60 in hour 0, 60 in hour 1
        ])
    }

    func testSamplesAsTableJSONAndCSV() async throws {
        let table = try healthgate("samples", "--type", "heartRate", "--db", path, "--order", "desc", "--limit", "2")
        XCTAssertEqual(table.status, 0, table.error)
        let lines = table.output.split(separator: "\n")
        XCTAssertEqual(lines.count, 3)
        XCTAssertTrue(lines[1].hasPrefix("2027-01-16T00:03:10.000000Z"), String(lines[1]))
        XCTAssertTrue(lines[2].contains("  80  "), String(lines[2]))

        let json = try healthgate(
            "samples", "--type", "heartRate", "--db", path, "--since", "2027-01-16T00:00:15Z", "--format", "json")
        XCTAssertEqual(json.status, 0, json.error)
        let decoded = try HealthJSON.makeDecoder().decode([QuantitySample].self, from: Data(json.output.utf8))
        XCTAssertEqual(decoded.map(\.canonicalValue), [80, 90])
        XCTAssertEqual(decoded.first?.device, strap)

        let csv = try healthgate("samples", "--type", "heartRate", "--db", path, "--until", "2027-01-16T00:00:15Z", "--format", "csv")
        XCTAssertEqual(csv.status, 0, csv.error)
        XCTAssertEqual(csv.output.split(separator: "\n").count, 2)
        XCTAssertTrue(csv.output.contains(",2027-01-16T00:00:10.000000Z,2027-01-16T00:00:10.000000Z,60.0,count/min,60.0,count/min,"))
    }

    func testStatsWithAndWithoutInterval() async throws {
        let hourly = try healthgate(
            "stats", "--type", "stepCount", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-16T03:00:00Z",
            "--interval", "hour", "--all", "--format", "json")
        XCTAssertEqual(hourly.status, 0, hourly.error)
        let buckets = try HealthJSON.makeDecoder().decode([QuantityStatistics].self, from: Data(hourly.output.utf8))
        XCTAssertEqual(buckets.map(\.sum), [60, 60, nil])  // the third hour is empty, and reported
        XCTAssertEqual(buckets.map(\.sampleCount), [1, 1, 0])

        let minutes = try healthgate(
            "stats", "--type", "heartRate", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-16T00:04:00Z",
            "--interval", "minute", "--all", "--format", "csv")
        XCTAssertEqual(minutes.status, 0, minutes.error)
        XCTAssertEqual(minutes.output.split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false)[2] },
                       ["2", "0", "0", "1"])

        let total = try healthgate(
            "stats", "--type", "heartRate", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-16T00:04:00Z")
        XCTAssertEqual(total.status, 0, total.error)
        // One row: 3 samples, average (60 + 80 + 90) / 3 = 76.667, printed as heart rates are (77),
        // min 60, max 90, most recent 90.
        let row = try XCTUnwrap(total.output.split(separator: "\n").last)
        XCTAssertEqual(row.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2),
                       ["3", "77", "60", "90", "90", "count/min"])
    }

    func testStatsOptions() async throws {
        let average = try healthgate(
            "stats", "--type", "heartRate", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-16T00:04:00Z",
            "--options", "average,maximum")
        XCTAssertEqual(average.status, 0, average.error)
        // 3 samples, average (60 + 80 + 90) / 3 = 76.667 (77), max 90; minimum and most recent not asked for.
        let row = try XCTUnwrap(average.output.split(separator: "\n").last)
        XCTAssertEqual(row.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2),
                       ["3", "77", "-", "90", "-", "count/min"])

        let mixed = try healthgate("stats", "--type", "heartRate", "--db", path, "--options", "sum")
        XCTAssertEqual(mixed.status, 64)
        XCTAssertTrue(mixed.error.contains("heartRate is discrete: sum does not apply"), mixed.error)
        let unknown = try healthgate("stats", "--type", "heartRate", "--db", path, "--options", "average,median")
        XCTAssertEqual(unknown.status, 64)
        XCTAssertTrue(unknown.error.contains("unknown statistic \"median\""), unknown.error)
        let byDevice = try healthgate("stats", "--type", "heartRate", "--db", path, "--options", "average", "--by-device")
        XCTAssertEqual(byDevice.status, 64)
        XCTAssertTrue(byDevice.error.contains("--options does not combine with --by-device"), byDevice.error)
    }

    func testCalendarDaysInATimeZone() async throws {
        // Berlin is at +01:00 in January: the day of 16 January runs 15 Jan 23:00 … 16 Jan 23:00 UTC,
        // and the 120 steps of 00:50 … 01:10 UTC fall in it.
        let days = try healthgate(
            "stats", "--type", "stepCount", "--db", path, "--since", "2027-01-16", "--until", "2027-01-17T12:00:00Z",
            "--interval", "day", "--time-zone", "Europe/Berlin", "--all", "--format", "json")
        XCTAssertEqual(days.status, 0, days.error)
        let buckets = try HealthJSON.makeDecoder().decode([QuantityStatistics].self, from: Data(days.output.utf8))
        XCTAssertEqual(buckets.map { RFC3339.string(from: $0.startDate) },
                       ["2027-01-15T23:00:00.000000Z", "2027-01-16T23:00:00.000000Z"])
        XCTAssertEqual(buckets.map(\.sum), [120, nil])

        // An explicit anchor at 06:00 UTC: the buckets are 15 Jan 06:00 … 16 Jan 06:00 and so on.
        let anchored = try healthgate(
            "stats", "--type", "stepCount", "--db", path, "--since", "2027-01-16", "--until", "2027-01-16T12:00:00Z",
            "--interval", "day", "--time-zone", "UTC", "--anchor", "2027-01-01T06:00:00Z", "--all", "--format", "json")
        XCTAssertEqual(anchored.status, 0, anchored.error)
        let shifted = try HealthJSON.makeDecoder().decode([QuantityStatistics].self, from: Data(anchored.output.utf8))
        XCTAssertEqual(shifted.map { RFC3339.string(from: $0.startDate) },
                       ["2027-01-15T06:00:00.000000Z", "2027-01-16T06:00:00.000000Z"])
        XCTAssertEqual(shifted.map(\.sum), [120, nil])

        let badZone = try healthgate("stats", "--type", "stepCount", "--db", path, "--interval", "day", "--time-zone", "Mars/Olympus")
        XCTAssertEqual(badZone.status, 64)
        XCTAssertTrue(badZone.error.contains("--time-zone"), badZone.error)
    }

    func testStatsByDevice() async throws {
        // A second strap beside the Polar: minute 0 holds Polar 60 and 80 and TICKR 100, minute 3
        // the Polar's 90 alone.
        let tickr = Device(name: "TICKR", manufacturer: "Wahoo", model: "TICKR", localIdentifier: "11:22:33:44:55:66")
        try await HealthStore(path: path).write([.quantity(try heartRate(SampleIDGenerator(seed: 9), 100, at: 30, device: tickr))])
        let json = try healthgate(
            "stats", "--type", "heartRate", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-16T00:04:00Z",
            "--interval", "minute", "--by-device", "--all", "--format", "json")
        XCTAssertEqual(json.status, 0, json.error)
        let minutes = try HealthJSON.makeDecoder().decode([StatisticsByDevice].self, from: Data(json.output.utf8))
        XCTAssertEqual(minutes.map(\.overall.sampleCount), [3, 0, 0, 1])
        XCTAssertEqual(minutes[0].overall.average, 80)  // (60 + 80 + 100) / 3, not (70 + 100) / 2
        XCTAssertEqual(minutes[0].devices.map(\.device?.name), ["Polar H10", "TICKR"])
        XCTAssertEqual(minutes[0].devices.map(\.statistics.average), [70, 100])
        XCTAssertEqual(minutes[3].devices.map(\.device?.name), ["Polar H10"])

        let table = try healthgate(
            "stats", "--type", "heartRate", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-16T00:04:00Z",
            "--by-device")
        XCTAssertEqual(table.status, 0, table.error)
        // The header, the row over all samples, then one per device: 4 samples, average 82.5 (83).
        let lines = table.output.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        XCTAssertEqual(lines.count, 4, table.output)
        XCTAssertEqual(Array(lines[1].dropFirst(2)), ["all", "4", "83", "60", "100", "90", "count/min"])
        XCTAssertEqual(Array(lines[2].dropFirst(2)), ["Polar", "H10", "[AA:BB:CC:DD:EE:FF]", "3", "77", "60", "90", "90", "count/min"])
        XCTAssertEqual(Array(lines[3].dropFirst(2)), ["TICKR", "[11:22:33:44:55:66]", "1", "100", "100", "100", "100", "count/min"])

        let csv = try healthgate(
            "stats", "--type", "stepCount", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-16T02:00:00Z",
            "--interval", "hour", "--by-device", "--format", "csv")
        XCTAssertEqual(csv.status, 0, csv.error)
        XCTAssertEqual(csv.output.split(separator: "\n").dropFirst(), [
            "2027-01-16T00:00:00.000000Z,2027-01-16T01:00:00.000000Z,all,,,,,1,60.0,,,,,,count",
            "2027-01-16T00:00:00.000000Z,2027-01-16T01:00:00.000000Z,device,pedometer,,,usb-1,1,60.0,,,,,,count",
            "2027-01-16T01:00:00.000000Z,2027-01-16T02:00:00.000000Z,all,,,,,1,60.0,,,,,,count",
            "2027-01-16T01:00:00.000000Z,2027-01-16T02:00:00.000000Z,device,pedometer,,,usb-1,1,60.0,,,,,,count",
        ])
    }

    func testErrorsHaveSysexitsCodes() async throws {
        let missing = try healthgate("samples", "--type", "heartRate", "--db", directory.appendingPathComponent("none.sqlite").path)
        XCTAssertEqual(missing.status, 66)
        XCTAssertTrue(missing.error.contains("no store at"), missing.error)

        let unknown = try healthgate("samples", "--type", "heartbeat", "--db", path)
        XCTAssertEqual(unknown.status, 64)
        XCTAssertTrue(unknown.error.contains("(one of: heartRate, stepCount"), unknown.error)

        let badDate = try healthgate("stats", "--type", "heartRate", "--db", path, "--since", "last tuesday")
        XCTAssertEqual(badDate.status, 64)
        let badLast = try healthgate("stats", "--type", "heartRate", "--db", path, "--last", "10y")
        XCTAssertEqual(badLast.status, 64)
        XCTAssertTrue(badLast.error.contains("30s, 15m, 1h, 7d or 1w"), badLast.error)

        let notAStore = directory.appendingPathComponent("notes.txt").path
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: notAStore))
        let garbage = try healthgate("samples", "--type", "heartRate", "--db", notAStore)
        XCTAssertEqual(garbage.status, 65)
    }

    /// Dates as a person types them (issue #45): a date and a time as two words (no quotes), a
    /// local time without a zone, in --time-zone; weeks for --last; a type in the wrong case.
    func testDatesAsAPersonTypesThem() async throws {
        // Two words: the time is no longer dropped (before, the range began at midnight).
        let spaced = try healthgate(
            "samples", "--type", "heartRate", "--db", path, "--since", "2027-01-16", "00:00:15", "--time-zone", "UTC",
            "--format", "json")
        XCTAssertEqual(spaced.status, 0, spaced.error)
        XCTAssertEqual(try HealthJSON.makeDecoder().decode([QuantitySample].self, from: Data(spaced.output.utf8)).map(\.canonicalValue), [80, 90])
        // Minutes only, in one word, and local time: 01:01 in Berlin is 00:01 UTC.
        for (since, zone) in [("2027-01-16 00:01", "UTC"), ("2027-01-16T01:01", "Europe/Berlin"), ("2027-01-16 01:01", "Europe/Berlin")] {
            let local = try healthgate("samples", "--type", "heartRate", "--db", path, "--since", since, "--time-zone", zone, "--format", "json")
            XCTAssertEqual(local.status, 0, local.error)
            XCTAssertEqual(
                try HealthJSON.makeDecoder().decode([QuantitySample].self, from: Data(local.output.utf8)).map(\.canonicalValue), [90],
                "\(since) in \(zone)")
        }
        let help = try runHealthgate(["query", "samples", "--help"])
        XCTAssertTrue(help.output.contains("2026-11-21 08:00[:00] or 2026-11-21T08:00[:00] (local time)"), help.output)
        XCTAssertTrue(help.output.contains("2026-11-21 (local midnight)"), help.output)

        let week = try healthgate("samples", "--type", "heartRate", "--db", path, "--last", "1w")
        XCTAssertEqual(week.status, 0, week.error)

        // The one type it matches ignoring case is taken; a misspelling gets the nearest.
        let lower = try healthgate("samples", "--type", "heartrate", "--db", path, "--format", "json")
        XCTAssertEqual(lower.status, 0, lower.error)
        XCTAssertEqual(try HealthJSON.makeDecoder().decode([QuantitySample].self, from: Data(lower.output.utf8)).count, 3)
        let misspelt = try healthgate("samples", "--type", "hartrate", "--db", path)
        XCTAssertEqual(misspelt.status, 64)
        XCTAssertTrue(misspelt.error.contains(#"unknown type "hartrate"; did you mean heartRate?"#), misspelt.error)
    }

    /// Issue #45: a day without a time is local midnight, as `2026-11-25 17:36` is local time;
    /// local is `$TZ` here, set in the executable's environment (no --time-zone). The samples
    /// lie at 00:00:10, 00:00:20 and 00:03:10 UTC on 16 January, which is 19:00 on the 15th in
    /// New York (-05:00): a UTC midnight would take all three from 16 January and none before it.
    func testADayIsLocalMidnightInTheZoneOfTZ() async throws {
        var healthgate = try HealthgateExecutable()
        healthgate.environment["TZ"] = "America/New_York"
        func values(_ range: String...) async throws -> [Double] {
            let result = try await healthgate.run(["query", "samples", "--type", "heartRate", "--db", path, "--format", "json"] + range)
            XCTAssertEqual(result.status, 0, "\(range): \(result.standardError)")
            return try HealthJSON.makeDecoder().decode([QuantitySample].self, from: Data(result.standardOutput.utf8)).map(\.canonicalValue)
        }
        // New York's 16 January begins at 05:00 UTC, after every sample; its 15th at 05:00 UTC on the 15th.
        let sinceSixteenth = try await values("--since", "2027-01-16")
        XCTAssertEqual(sinceSixteenth, [])
        let untilSixteenth = try await values("--until", "2027-01-16")
        XCTAssertEqual(untilSixteenth, [60, 80, 90])
        let fifteenth = try await values("--since", "2027-01-15", "--until", "2027-01-16")
        XCTAssertEqual(fifteenth, [60, 80, 90])
        // The same as the day's 00:00 in the local forms.
        let spelled = try await values("--since", "2027-01-15", "19:00:15")
        XCTAssertEqual(spelled, [80, 90])
        let midnight = try await values("--until", "2027-01-16 00:00")
        XCTAssertEqual(midnight, untilSixteenth)
        // --time-zone still wins over $TZ; and a zone written in the date wins over both.
        let utc = try await values("--since", "2027-01-16", "--time-zone", "UTC")
        XCTAssertEqual(utc, [60, 80, 90])
        let explicit = try await values("--since", "2027-01-16T00:00:15Z")
        XCTAssertEqual(explicit, [80, 90])
    }
}
