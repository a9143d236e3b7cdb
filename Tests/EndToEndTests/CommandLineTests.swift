import Foundation
import GatewayTesting
import XCTest

/// The built executable's command-line contract: help, exit codes, error messages.
final class CommandLineTests: XCTestCase {
    /// Issue #45: rounded to the unit's precision, with no floating-point noise; `--exact`
    /// prints every digit.
    func testUnitsConvertRoundsToTheUnitsPrecisionAndExactPrintsEveryDigit() async throws {
        let healthgate = try HealthgateExecutable()
        for (arguments, expected) in [
            (["300", "kJ", "kcal"], "71.7"),
            (["98.6", "degF", "degC"], "37"),
            (["37", "degC", "degF"], "98.6"),
            (["0.00123", "kg", "g"], "1.23"),
            (["1", "kg/m.s^2", "Pa"], "1"),
            (["300", "kJ", "kcal", "--exact"], "71.7017208413002"),
        ] {
            let result = try await healthgate.run(["units", "convert"] + arguments)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.standardError)")
            XCTAssertEqual(result.standardOutput, expected + "\n", "\(arguments)")
        }
    }

    /// Issue #45: the names people type for HealthKit's units, in any case, alone and inside a
    /// quotient; `units list` lists them.
    func testUnitsConvertAcceptsTheNamesPeopleTypeAndListsThem() async throws {
        let healthgate = try HealthgateExecutable()
        for (arguments, expected) in [
            (["180", "lbs", "Kg"], "81.65"),
            (["81.65", "kg", "lb"], "180"),
            (["72", "bpm", "count/min"], "72"),
            (["5.5", "mmol/L", "mg/dL"], "99.1"),
            (["100", "mg/dl", "mmol/L"], "5.55"),
            (["1.5", "h", "min"], "90"),
            (["26.2", "miles", "km"], "42.16"),
            (["10", "km/h", "mph"], "6.21"),
            (["3", "mi", "KM"], "4.83"),
        ] {
            let result = try await healthgate.run(["units", "convert"] + arguments)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.standardError)")
            XCTAssertEqual(result.standardOutput, expected + "\n", "\(arguments)")
        }
        let list = try await healthgate.run(["units", "list"])
        XCTAssertEqual(list.status, 0, list.standardError)
        for row in ["count/min", "bpm", "lbs", "mmol<180.15588000005408>/L", "mmol/L", "hr", "miles"] {
            XCTAssertTrue(list.standardOutput.contains(row), "\(row): \(list.standardOutput)")
        }
        let help = try await healthgate.run(["units", "--help"])
        XCTAssertTrue(help.standardOutput.contains("units list"), help.standardOutput)
    }

    func testUnitsConvertRejectsIncompatibleAndInvalidUnitsWithStatus65() async throws {
        let healthgate = try HealthgateExecutable()
        try await healthgate.assertRun(["units", "convert", "1", "count", "%"], exits: 65, saying: "cannot convert count to %")
        let invalid = try await healthgate.run(["units", "convert", "1", "furlong", "m"])
        XCTAssertEqual(invalid.status, 65)
        XCTAssertTrue(invalid.standardError.contains("unknown unit \"furlong\""), invalid.standardError)
        XCTAssertFalse(invalid.standardError.contains("did you mean"), "nothing is near furlong: \(invalid.standardError)")
        // A near miss of a listed name gets the one meant.
        try await healthgate.assertRun(["units", "convert", "70", "kilogam", "lb"], exits: 65, saying: #"unknown unit "kilogam" in "kilogam"; did you mean kilogram?"#)
        let usage = try await healthgate.run(["units", "convert", "1", "m"])
        XCTAssertEqual(usage.status, 64)
    }

    func testEveryCommandHasHelp() async throws {
        let healthgate = try HealthgateExecutable()
        let top = try await healthgate.run(["--help"])
        XCTAssertEqual(top.status, 0)
        // Every command listed under SUBCOMMANDS, and every subcommand of those, answers --help.
        let commands = Self.subcommands(in: top.standardOutput)
        XCTAssertTrue(commands.contains("run") && commands.contains("demo") && commands.contains("status"), "\(commands)")
        for command in commands {
            let help = try await healthgate.run([command, "--help"])
            XCTAssertEqual(help.status, 0, "\(command) --help: \(help.standardError)")
            XCTAssertTrue(help.standardOutput.hasPrefix("USAGE: healthgate \(command)"), help.standardOutput)
            for sub in Self.subcommands(in: help.standardOutput) {
                let subHelp = try await healthgate.run([command, sub, "--help"])
                XCTAssertEqual(subHelp.status, 0, "\(command) \(sub) --help")
                XCTAssertTrue(subHelp.standardOutput.hasPrefix("USAGE: healthgate \(command) \(sub)"), subHelp.standardOutput)
            }
        }
    }

    /// The top-level help names every kind of Bluetooth device the gateway connects to, from
    /// the same catalog as `scan`'s table of kinds (a profile added to the catalog shows in
    /// both), the devices that only advertise, whose sources `scan` names too, and the ANT+
    /// straps and pedometers of the serial family.
    func testTopLevelHelpListsEveryKindOfDeviceTheCatalogReads() async throws {
        let healthgate = try HealthgateExecutable()
        let top = try await healthgate.run(["--help"]).standardOutput
        let scan = try await healthgate.run(["scan", "--help"]).standardOutput
        let kinds = scan.split(separator: "\n").filter { $0.wholeMatch(of: /\s{2}[a-z-]+ +[0-9a-f]{4}  \(ble-[a-z-]+\)/) != nil }
        let connected = try XCTUnwrap(top.firstMatch(of: /through BlueZ: those it connects to \(([^)]*)\)/)?.output.1)
        // "a, b, … and z": the names before the last are separated by commas.
        let names = connected.split(separator: ", ")
        XCTAssertGreaterThanOrEqual(kinds.count, 12, scan)
        XCTAssertEqual(names.count + 1, kinds.count, "top help: \(connected); scan: \(kinds)")
        XCTAssertTrue(connected.hasPrefix("heart-rate monitors, foot pods, "), "\(connected)")

        let advertising = try XCTUnwrap(top.firstMatch(of: /and those that only advertise \(([^)]*)\)/)?.output.1)
        XCTAssertEqual(advertising, "Polar straps broadcasting their heart rate and Xiaomi scales", top)
        // As many as the advertisement sources `scan --help` names.
        let broadcasters = try XCTUnwrap(scan.firstMatch(of: /read their advertisements: ([a-z, -]+)\./)?.output.1)
        XCTAssertEqual(advertising.split(separator: " and ").count, broadcasters.split(separator: ", ").count, scan)
        XCTAssertTrue(
            top.contains("It also reads serial pedometers over USB or RFCOMM and ANT+ heart-rate straps through a USB ANT stick."), top)
    }

    func testUnknownCommandAndOptionAreUsageErrors() async throws {
        let healthgate = try HealthgateExecutable()
        let unknown = try await healthgate.run(["frobnicate"])
        XCTAssertEqual(unknown.status, 64)
        XCTAssertTrue(unknown.standardError.contains("unknown command 'frobnicate'"), unknown.standardError)
        let option = try await healthgate.run(["run", "--bogus"])
        XCTAssertEqual(option.status, 64)
        XCTAssertTrue(option.standardError.contains("unknown option --bogus"), option.standardError)
    }

    func testStatusWithoutDaemonExits69() async throws {
        let healthgate = try HealthgateExecutable()
        try await healthgate.assertRun(["status"], exits: 69, saying: "not running")
    }

    func testBrokenConfigurationNamesFileKeyPathAndReason() async throws {
        let healthgate = try HealthgateExecutable()
        let file = healthgate.root.appendingPathComponent("broken.json")
        try Data(#"{"sinks": [{"kind": "sqlite", "queue": {"capacity": 0}}]}"#.utf8).write(to: file)
        let result = try await healthgate.run(["run", "--config", file.path, "--duration", "1"])
        XCTAssertEqual(result.status, 78)
        XCTAssertTrue(result.standardError.contains("\(file.path): sinks[0].queue.capacity"), result.standardError)
        XCTAssertTrue(result.standardError.contains("0 is below the smallest accepted value 1 (records)"), result.standardError)

        try Data(#"{"sources": [{"kind": "no-such-plugin"}]}"#.utf8).write(to: file)
        try await healthgate.assertRun(["config", "check", file.path], exits: 78, saying: "sources[0].kind: unknown kind \"no-such-plugin\"")

        try Data("{not json".utf8).write(to: file)
        try await healthgate.assertRun(["config", "check", file.path], exits: 78, saying: "not valid JSON")

        let missing = try await healthgate.run(["run", "--config", "/nonexistent/healthgate.json"])
        XCTAssertEqual(missing.status, 66, "EX_NOINPUT, as docs/installing-and-operating.md lists for missing input")
        XCTAssertTrue(missing.standardError.contains("/nonexistent/healthgate.json"), missing.standardError)
    }

    func testConfigInitWritesACheckableFileAndRefusesToOverwrite() async throws {
        let healthgate = try HealthgateExecutable()
        let created = try await healthgate.run(["config", "init"])
        XCTAssertEqual(created.status, 0, created.standardError)
        let file = healthgate.root.appendingPathComponent("config/healthgate/config.json")
        XCTAssertTrue(FileManager.default.fileExists(atPath: file.path))
        let again = try await healthgate.run(["config", "init"])
        XCTAssertEqual(again.status, 73)
        let check = try await healthgate.run(["config", "check", file.path])
        XCTAssertEqual(check.status, 0, check.standardError)
        XCTAssertTrue(check.standardOutput.contains("sink   sqlite (sqlite)"), check.standardOutput)
    }

    /// The names listed under SUBCOMMANDS in a help text.
    static func subcommands(in help: String) -> [String] {
        guard let start = help.range(of: "SUBCOMMANDS:\n") else { return [] }
        return help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { !$0.isEmpty }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
    }
}
