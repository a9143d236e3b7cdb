import Foundation
import GatewayTesting
import XCTest

/// What the built executable does with the mistakes a person makes on the command line: an
/// argument nothing takes is refused (64) naming it, and a misspelt command, option or type gets
/// the one meant (issue #45).
final class StrictArgumentsTests: XCTestCase {
    func testAnArgumentNothingTakesIsRefusedNamingIt() async throws {
        let healthgate = try HealthgateExecutable()
        let store = healthgate.root.appendingPathComponent("none.sqlite").path
        // Unquoted, the device's name is three words: before, "healthgate" alone was the device
        // and the command said "nothing matched".
        let delete = try await healthgate.run(["delete", "--device", "healthgate", "demo", "HRM", "--last", "1h", "--db", store])
        XCTAssertEqual(delete.status, 64, delete.standardError)
        XCTAssertTrue(delete.standardError.contains("unexpected argument \"demo\""), delete.standardError)
        XCTAssertTrue(delete.standardError.contains("--device \"healthgate demo HRM\""), delete.standardError)

        let stats = try await healthgate.run(["query", "stats", "--type", "heartRate", "--last", "1h", "extra", "--db", store])
        XCTAssertEqual(stats.status, 64, stats.standardError)
        XCTAssertTrue(stats.standardError.contains("unexpected argument \"extra\""), stats.standardError)

        // A command with positional arguments takes exactly those its synopsis names.
        try await healthgate.assertRun(["units", "convert", "1", "km", "m", "extra"], exits: 64, saying: "unexpected argument \"extra\"; this command takes only VALUE FROM TO")
        let show = try await healthgate.run(["workout", "show", "a", "b", "--db", store])
        XCTAssertEqual(show.status, 64)
        XCTAssertTrue(show.standardError.contains("unexpected argument \"b\""), show.standardError)
    }

    func testAMisspeltCommandGetsTheOneMeantAndNoPageOfHelp() async throws {
        let healthgate = try HealthgateExecutable()
        for (typed, meant) in [("stauts", "status"), ("scna", "scan"), ("qeury", "query")] {
            let result = try await healthgate.run([typed])
            XCTAssertEqual(result.status, 64)
            XCTAssertTrue(result.standardError.contains("unknown command '\(typed)'; did you mean '\(meant)'?"), result.standardError)
            XCTAssertLessThanOrEqual(result.standardError.split(separator: "\n").count, 2, result.standardError)
        }
        let sub = try await healthgate.run(["workout", "stat"])
        XCTAssertEqual(sub.status, 64)
        XCTAssertTrue(sub.standardError.contains("did you mean 'workout start'?") || sub.standardError.contains("did you mean 'workout status'?"), sub.standardError)
    }

    func testHelpAndVersionAnswerTheirCommonSpellings() async throws {
        let healthgate = try HealthgateExecutable()
        for arguments in [["version"], ["--version"]] {
            let result = try await healthgate.run(arguments)
            XCTAssertEqual(result.status, 0, "\(arguments)")
            XCTAssertTrue(result.standardOutput.hasPrefix("healthgate "), result.standardOutput)
        }
        let short = try await healthgate.run(["-h"])
        XCTAssertEqual(short.status, 0)
        XCTAssertTrue(short.standardOutput.hasPrefix("USAGE: healthgate"), short.standardOutput)
        for arguments in [["status", "-h"], ["help", "status"]] {
            let command = try await healthgate.run(arguments)
            XCTAssertEqual(command.status, 0, "\(arguments)")
            XCTAssertTrue(command.standardOutput.hasPrefix("USAGE: healthgate status"), command.standardOutput)
        }
        let nested = try await healthgate.run(["help", "query", "samples"])
        XCTAssertTrue(nested.standardOutput.hasPrefix("USAGE: healthgate query samples"), nested.standardOutput)
    }

    func testAMisspeltOptionGetsTheOneMeant() async throws {
        let healthgate = try HealthgateExecutable()
        try await healthgate.assertRun(["query", "samples", "--type", "heartRate", "--lmit", "3"], exits: 64, saying: "unknown option --lmit; did you mean --limit?")
    }

    func testPairSaysWhatAnAddressLooksLike() async throws {
        let healthgate = try HealthgateExecutable()
        let result = try await healthgate.run(["pair", "AABBCC"])
        XCTAssertEqual(result.status, 64)
        XCTAssertTrue(result.standardError.contains("\"AABBCC\" is not a Bluetooth address"), result.standardError)
        XCTAssertTrue(result.standardError.contains("AA:BB:CC:DD:EE:FF"), result.standardError)
        XCTAssertFalse(result.standardError.contains("[\""), result.standardError)
    }

    /// `devices` says `--format json` as every other command does, and its JSON keeps a path's
    /// slashes as they are (`/dev/ttyUSB0`, not `\/dev\/ttyUSB0`).
    func testDevicesTakesFormatJSONAndDoesNotEscapeSlashes() async throws {
        let healthgate = try HealthgateExecutable()
        let result = try await healthgate.run(["devices", "--all", "--format", "json"])
        if result.status == 69 { throw XCTSkip("no udev database here: \(result.standardError)") }
        XCTAssertEqual(result.status, 0, result.standardError)
        let lines = result.standardOutput.split(separator: "\n")
        XCTAssertFalse(lines.isEmpty, "--all lists the virtual terminals at least")
        for line in lines {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            XCTAssertTrue((object["syspath"] as? String)?.hasPrefix("/sys/") ?? false, String(line))
            XCTAssertFalse(line.contains("\\/"), String(line))
        }
        let old = try await healthgate.run(["devices", "--json"])
        XCTAssertEqual(old.status, 64, old.standardError)
    }

    /// Issue #45: an option that takes a name from a closed set answers an unknown one with the
    /// names most likely meant and the list, and takes the one name it matches ignoring case.
    func testANameFromAClosedSetGetsTheOneMeantAndTheList() async throws {
        let healthgate = try HealthgateExecutable()
        let store = healthgate.root.appendingPathComponent("none.sqlite").path
        let socket = healthgate.root.appendingPathComponent("none.sock").path
        for (arguments, message) in [
            (["workout", "start", "--activity", "runing", "--socket", socket],
             #"unknown --activity "runing"; did you mean running? (one of: running, walking, cycling"#),
            (["workout", "activity", "cyclng", "--socket", socket], #"unknown activity "cyclng"; did you mean cycling?"#),
            (["demo", "--participants", "2", "--activity", "rowng", "--db", store], #"unknown --activity "rowng"; did you mean rowing?"#),
            (["query", "samples", "--type", "heartRate", "--format", "jsn", "--db", store],
             #"unknown --format "jsn"; did you mean json? (one of: table, json, csv)"#),
            (["query", "samples", "--type", "heartRate", "--order", "descending", "--db", store],
             #"unknown --order "descending"; did you mean desc? (one of: asc, desc)"#),
            (["query", "stats", "--type", "heartRate", "--interval", "minit", "--db", store],
             #"unknown --interval "minit"; did you mean minute? (one of: minute, hour, day, week, month, or a length such as 30s"#),
            (["query", "samples", "--type", "hartRate", "--db", store], #"unknown type "hartRate"; did you mean heartRate? (one of: heartRate, "#),
            (["query", "changes", "--type", "workot", "--db", store], #"unknown type "workot"; did you mean workout?"#),
            (["status", "--format", "josn", "--socket", socket], #"unknown --format "josn"; did you mean json? (one of: table, json)"#),
            (["participant", "list", "--format", "tabel", "--socket", socket], #"unknown --format "tabel"; did you mean table?"#),
            (["workout", "status", "--format", "jsno", "--socket", socket], #"unknown --format "jsno"; did you mean json? (one of: text, json)"#),
            (["devices", "--format", "yaml"], #"unknown --format "yaml" (one of: table, json)"#),
        ] {
            let result = try await healthgate.run(arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains(message), "\(arguments): \(result.standardError)")
        }
        // Another case of one name is that name: these get past the option to the missing daemon
        // (69) or the missing store (66), not a usage error.
        for (arguments, status) in [
            (["workout", "start", "--activity", "Running", "--socket", socket], Int32(69)),
            (["status", "--format", "JSON", "--socket", socket], 69),
            (["query", "samples", "--type", "HEARTRATE", "--order", "DESC", "--format", "Json", "--db", store], 66),
            (["query", "stats", "--type", "heartrate", "--interval", "Hour", "--db", store], 66),
        ] {
            let result = try await healthgate.run(arguments)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.standardError)")
        }
    }
}
