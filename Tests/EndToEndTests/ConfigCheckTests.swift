import Foundation
import GatewayTesting
import XCTest

/// `healthgate config check` against the real executable: it rejects everything `run` rejects,
/// with exit 78 and the file, key path and reason; 66 for a missing file; and it creates nothing.
final class ConfigCheckTests: XCTestCase {
    /// Writes `json` to a file and runs `config check` on it.
    private func check(
        _ healthgate: HealthgateExecutable, _ json: String, name: String = "config.json"
    ) async throws -> (HealthgateExecutable.Result, String) {
        let file = healthgate.root.appendingPathComponent(name)
        try Data(json.utf8).write(to: file)
        return (try await healthgate.run(["config", "check", file.path]), file.path)
    }

    /// Each row: a configuration, the key path and a part of the reason that must appear.
    private func assertRejected(
        _ rows: [(json: String, keyPath: String, reason: String)], file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let healthgate = try HealthgateExecutable()
        for row in rows {
            let (result, path) = try await check(healthgate, row.json)
            XCTAssertEqual(result.status, 78, "\(row.json): \(result.standardError)", file: file, line: line)
            XCTAssertTrue(
                result.standardError.contains("configuration error: \(path): \(row.keyPath): "),
                "\(row.json): \(result.standardError)", file: file, line: line)
            XCTAssertTrue(result.standardError.contains(row.reason), "\(row.json): \(result.standardError)", file: file, line: line)
        }
    }

    /// docs/configuration-reference.md is generated from the declarations (`config reference`);
    /// a change of a key without regenerating it fails here.
    func testTheCheckedInConfigurationReferenceIsWhatTheDeclarationsProduce() async throws {
        let healthgate = try HealthgateExecutable()
        let result = try await healthgate.run(["config", "reference"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let file = HealthgateExecutable.packageRoot().appendingPathComponent("docs/configuration-reference.md")
        let checkedIn = try String(contentsOf: file, encoding: .utf8)
        XCTAssertTrue(
            checkedIn == result.standardOutput,
            "docs/configuration-reference.md is stale: run `.build/debug/healthgate config reference > docs/configuration-reference.md`")
        // Every key of every plugin is in it, with its default.
        XCTAssertTrue(checkedIn.contains("## `sinks[http-repository].config.retry`"))
        XCTAssertTrue(checkedIn.contains("| `maxDelaySeconds` | number | `30` | 0.001 to 86400 seconds |"), "the mqtt sink's own retry default")
    }

    func testTyposAreRejectedEverywhereWithASuggestion() async throws {
        try await assertRejected([
            (#"{"sorces": [{"kind": "ble-heart-rate"}]}"#, "sorces", #"did you mean "sources"?"#),
            (#"{"sinksx": []}"#, "sinksx", #"did you mean "sinks"?"#),
            (#"{"sinks": [{"kind": "sqlite", "queue": {"polcy": "block"}}]}"#, "sinks[0].queue.polcy", #"did you mean "policy"?"#),
            (#"{"store": {"paTh": "/tmp/x.sqlite"}}"#, "store.paTh", #"did you mean "path"?"#),
            (#"{"stor": {"path": "/tmp/x.sqlite"}}"#, "stor", #"did you mean "store"?"#),
            (#"{"sinks": [{"kind": "http-repository", "config": {"url": "https://a.example", "gip": true}}]}"#,
             "sinks[0].config.gip", #"did you mean "gzip"?"#),
            (#"{"sources": [{"kind": "serial-pedometer", "config": {"udev": true, "xclusive": false}}]}"#,
             "sources[0].config.xclusive", #"did you mean "exclusive"?"#),
            (#"{"contrlSocket": "/tmp/x.sock"}"#, "contrlSocket", #"did you mean "controlSocket"?"#),
            (#"{"profile": {"weightKilogrAms": 70}}"#, "profile.weightKilogrAms", #"did you mean "weightKilograms"?"#),
        ])
    }

    /// Issue #45: a suggestion is a key that takes the value given (case and prefix count), a
    /// refused key is never offered, and an unknown key with no near miss lists the keys there are.
    func testSuggestionsTakeTheValueGivenAndNeverOfferARefusedKey() async throws {
        let mqtt = #"{"sinks": [{"kind": "mqtt", "config": {"host": "broker.example.org", "#
        try await assertRejected([
            (mqtt + #""homeassistant": true}}]}"#, "sinks[0].config.homeassistant", #"did you mean "homeAssistantDiscovery"?"#),
            (mqtt + #""homeassistant": "ha"}}]}"#, "sinks[0].config.homeassistant", #"did you mean "homeAssistantPrefix"?"#),
            (mqtt + #""HOST2": "b"}}]}"#, "sinks[0].config.HOST2", #"did you mean "host"?"#),
            (#"{"sources": [{"kind": "serial-pedometer", "config": {"path": "/dev/ttyACM0", "baud": 9600}}]}"#,
             "sources[0].config.baud", #"did you mean "baudRate"?"#),
            (mqtt + #""password": "secret"}}]}"#, "sinks[0].config.password", "secrets are never written inline; use passwordFile"),
        ])
        let healthgate = try HealthgateExecutable()
        let (unknown, _) = try await check(healthgate, mqtt + #""qwerty": 1}}]}"#)
        XCTAssertEqual(unknown.status, 78, unknown.standardError)
        XCTAssertTrue(unknown.standardError.contains("known keys: ackTimeoutSeconds, batchSize"), unknown.standardError)
        XCTAssertTrue(unknown.standardError.contains("passwordFile"), unknown.standardError)
        XCTAssertFalse(unknown.standardError.contains("password,"), unknown.standardError)
    }

    /// Issue #45: every unknown key and every number out of range of a file, each with its key
    /// path, in one run; the exit status stays 78.
    func testEveryMistakeOfAFileIsReportedAtOnce() async throws {
        let healthgate = try HealthgateExecutable()
        let (result, path) = try await check(healthgate, """
            {"sorces": [],
             "sinks": [{"kind": "mqtt", "config": {"host": "b.example", "homeassistant": true, "batchSize": -5, "password": "x"}}],
             "sources": [{"kind": "serial-pedometer", "config": {"path": "/dev/ttyACM0", "baud": 9600}}],
             "profile": {"weightKilograms": 9000}}
            """)
        XCTAssertEqual(result.status, 78, result.standardError)
        for (keyPath, reason) in [
            ("sorces", #"did you mean "sources"?"#),
            ("sinks[0].config.homeassistant", #"did you mean "homeAssistantDiscovery"?"#),
            ("sinks[0].config.batchSize", "-5 is below the smallest accepted value"),
            ("sinks[0].config.password", "secrets are never written inline"),
            ("sources[0].config.baud", #"did you mean "baudRate"?"#),
            ("profile.weightKilograms", "9000 is above the largest accepted value"),
        ] {
            let lines = result.standardError.split(separator: "\n")
            XCTAssertTrue(
                lines.contains { $0.contains("\(path): \(keyPath): ") && $0.contains(reason) }, "\(keyPath): \(result.standardError)")
        }
        XCTAssertEqual(result.standardError.split(separator: "\n").count, 6, result.standardError)
    }

    /// Issue #45 ("a hand-written file took five rounds"): a file as a person writes it by hand,
    /// with a mistake of each kind the decoder used to report one per run (a value of another
    /// shape: a quoted number, a quoted boolean, an object where a list goes, text where a
    /// number goes; a name outside its set; an unknown plugin kind after another plugin) and a
    /// number out of range: one run lists every one with its key path and the fix, exit 78.
    func testAHandWrittenFileWithEveryKindOfMistakeIsReportedInOneRun() async throws {
        let healthgate = try HealthgateExecutable()
        let (result, path) = try await check(healthgate, """
            {
              "logLevel": "warn",
              "shutdownTimeoutSeconds": "10",
              "sources": [
                {"kind": "ble-heart-rate", "config": {"transport": "simulated", "simulation": {"heartRateMonitors": 1}}},
                {"kind": "serial-pedometr", "config": {"path": "/dev/ttyACM0"}}
              ],
              "sinks": {"kind": "sqlite"},
              "clock": {"trusted": "yes"},
              "store": {"maxDatabaseMegabytes": 0},
              "profile": {"weightKilograms": "70 kg"}
            }
            """)
        XCTAssertEqual(result.status, 78, result.standardError)
        let lines = result.standardError.split(separator: "\n")
        for (keyPath, reason) in [
            ("logLevel", #"the string "warn" is not one of "debug", "info", "notice", "warning", "error"; did you mean "warning"?"#),
            ("shutdownTimeoutSeconds", #"expected a number (seconds, "#),
            ("shutdownTimeoutSeconds", "write the number without quotes: 10"),
            ("sources[1].kind", #"unknown kind "serial-pedometr"; did you mean "serial-pedometer"?"#),
            ("sinks", #"expected a list of objects, got an object; a list is written in brackets, even of one item: [{"kind": "sqlite"}]"#),
            ("clock.trusted", #"expected true or false, got the string "yes""#),
            ("store.maxDatabaseMegabytes", "0 is below the smallest accepted value"),
            ("profile.weightKilograms", #"expected a number (kilograms, 20 to 400), got the string "70 kg"; write the number alone, without quotes, in kilograms: 70"#),
        ] {
            XCTAssertTrue(
                lines.contains { $0.contains("\(path): \(keyPath): ") && $0.contains(reason) }, "\(keyPath): \(result.standardError)")
        }
        XCTAssertEqual(lines.count, 7, result.standardError)
        XCTAssertTrue(lines.allSatisfy { $0.contains("\(path): ") }, result.standardError)

        // The same mistakes fixed: the file passes.
        let (fixed, _) = try await check(healthgate, """
            {"logLevel": "warning", "shutdownTimeoutSeconds": 10,
             "sources": [{"kind": "ble-heart-rate", "config": {"transport": "simulated", "simulation": {"heartRateMonitors": 1}}},
                         {"kind": "serial-pedometer", "config": {"path": "/dev/ttyACM0"}}],
             "sinks": [{"kind": "sqlite"}], "clock": {"trusted": true}, "store": {"maxDatabaseMegabytes": 100},
             "profile": {"weightKilograms": 70}}
            """)
        XCTAssertEqual(fixed.status, 0, fixed.standardError)
    }

    /// A plugin in the wrong list is told where it goes, and an unknown kind gets the one meant,
    /// both with the file's other mistakes.
    func testAPluginInTheWrongListOrOfAnUnknownKindSaysWhereAndWhich() async throws {
        try await assertRejected([
            (#"{"sources": [{"kind": "sqlite"}]}"#, "sources[0].kind", #""sqlite" is a sink, not a source: move it to "sinks""#),
            (#"{"sinks": [{"kind": "sqlite"}, {"kind": "ble-heart-rate"}]}"#, "sinks[1].kind",
             #""ble-heart-rate" is a source, not a sink: move it to "sources""#),
            (#"{"sinks": [{"kind": "mqqt", "config": {"host": "b"}}]}"#, "sinks[0].kind", #"unknown kind "mqqt"; did you mean "mqtt"?"#),
        ])
    }

    /// A file that is not an object, and sections and plugin settings that are not objects:
    /// each error names where, never an empty key path (`config.json: : expected …`), and the
    /// file is told what it must be.
    func testAValueThatIsNotAnObjectIsNamedWhereverItIs() async throws {
        try await assertRejected([
            (#""x""#, "(top level)", #"the file must be a JSON object, such as {"sources": [...], "sinks": [...]}"#),
            ("[]", "(top level)", "got an array"),
            (#"{"store": "x"}"#, "store", #"expected an object, got the string "x""#),
            (#"{"sinks": [{"kind": "sqlite", "config": 3}]}"#, "sinks[0].config", "expected an object, got 3"),
            (#"{"sources": ["x"]}"#, "sources[0]", #"got the string "x""#),
        ])
        let healthgate = try HealthgateExecutable()
        for json in [#""x""#, "[]", #"{"store": "x"}"#, #"{"sinks": [{"kind": "sqlite", "config": 3}]}"#, #"{"sources": ["x"]}"#] {
            let (result, path) = try await check(healthgate, json)
            XCTAssertFalse(result.standardError.contains("\(path): : "), "\(json): \(result.standardError)")
        }
    }

    /// What only a plugin's own validation can tell (after the file decodes) is reported for
    /// every plugin at once too, with the other sections' mistakes.
    func testEveryPluginsValidationErrorIsReportedAtOnce() async throws {
        let healthgate = try HealthgateExecutable()
        let (result, path) = try await check(healthgate, """
            {"sources": [{"kind": "serial-pedometer", "config": {}},
                         {"kind": "serial-pedometer", "name": "second", "config": {}}],
             "sinks": [{"kind": "http-repository", "config": {"url": "ftp://a.example"}}]}
            """)
        XCTAssertEqual(result.status, 78, result.standardError)
        let lines = result.standardError.split(separator: "\n")
        for prefix in ["sources[0].config", "sources[1].config", "sinks[0].config"] {
            XCTAssertTrue(lines.contains { $0.contains("\(path): \(prefix)") }, "\(prefix): \(result.standardError)")
        }
    }

    func testOldKeyNamesSuggestTheirNewNames() async throws {
        try await assertRejected([
            (#"{"sinks": [{"kind": "sqlite", "config": {"batchWindowMilliseconds": 100}}]}"#,
             "sinks[0].config.batchWindowMilliseconds", #"did you mean "batchWindowSeconds"?"#),
            (#"{"sinks": [{"kind": "sqlite", "config": {"path": "/tmp/x.sqlite"}}]}"#,
             "sinks[0].config.path", #"did you mean "store.path (the top-level "store" object)"?"#),
            (#"{"sinks": [{"kind": "http-repository", "config": {"url": "https://a.example", "batchIntervalMilliseconds": 5}}]}"#,
             "sinks[0].config.batchIntervalMilliseconds", #"did you mean "batchIntervalSeconds"?"#),
            (#"{"sinks": [{"kind": "http-repository", "config": {"url": "https://a.example", "retry": {"maximumDelayMilliseconds": 5}}}]}"#,
             "sinks[0].config.retry.maximumDelayMilliseconds", #"did you mean "maxDelaySeconds"?"#),
            (#"{"sources": [{"kind": "ble-heart-rate", "config": {"reconnect": {"maxDelay": 60}}}]}"#,
             "sources[0].config.reconnect.maxDelay", #"did you mean "maxDelaySeconds"?"#),
            (#"{"sources": [{"kind": "serial-pedometer", "config": {"udev": true, "reconnectInterval": 2}}]}"#,
             "sources[0].config.reconnectInterval", #"did you mean "reconnectIntervalSeconds"?"#),
        ])
    }

    func testGatewayNameAndTimeZoneAreChecked() async throws {
        try await assertRejected([
            (#"{"timeZone": "Europe/Berlinn"}"#, "timeZone", #"not a time zone of the tz database"#),
            (#"{"timeZone": ""}"#, "timeZone", "must not be empty"),
            (#"{"gatewayName": "gym 1"}"#, "gatewayName", "letters, digits"),
            (#"{"gatewayName": "gym/1"}"#, "gatewayName", "letters, digits"),
            (#"{"gatewayName": ""}"#, "gatewayName", "must be 1 to 64"),
            (#"{"timezone": "UTC"}"#, "timezone", #"did you mean "timeZone"?"#),
        ])
        let healthgate = try HealthgateExecutable()
        let (accepted, _) = try await check(healthgate, #"{"gatewayName": "gym-1.north_2", "timeZone": "Europe/Berlin"}"#)
        XCTAssertEqual(accepted.status, 0, accepted.standardError)
    }

    func testHugeAndTinyNumbersAreOutOfRangeWithoutACrash() async throws {
        try await assertRejected([
            (#"{"store": {"maxDatabaseMegabytes": 1e18}}"#, "store.maxDatabaseMegabytes", "1e+18 is above the largest accepted value 16777215 (MB)"),
            (#"{"store": {"maxDatabaseMegabytes": 1e12}}"#, "store.maxDatabaseMegabytes", "1000000000000 is above the largest accepted value 16777215 (MB)"),
            (#"{"store": {"tombstoneRetentionDays": 0}}"#, "store.tombstoneRetentionDays", "0 is below the smallest accepted value 1 (days)"),
            (#"{"store": {"tombstoneRetention": 30}}"#, "store.tombstoneRetention", #"did you mean "tombstoneRetentionDays"?"#),
            (#"{"store": {"path": ""}}"#, "store.path", "must not be empty"),
            (#"{"store": {"keepWorkoutSamples": "yes"}}"#, "store.keepWorkoutSamples", #"expected true or false, got the string "yes""#),
            (#"{"store": {"keepWorkoutSample": true}}"#, "store.keepWorkoutSample", #"did you mean "keepWorkoutSamples"?"#),
            (#"{"sources": [{"kind": "serial-pedometer", "config": {"udev": true, "identificationTimeoutSeconds": 1e300}}]}"#,
             "sources[0].config.identificationTimeoutSeconds", "1e+300 is above the largest accepted value 3600 (seconds)"),
            (#"{"sources": [{"kind": "serial-pedometer", "config": {"udev": true, "identificationTimeoutSeconds": 1e18}}]}"#,
             "sources[0].config.identificationTimeoutSeconds", "above the largest accepted value 3600"),
            (#"{"sources": [{"kind": "serial-pedometer", "config": {"path": "/dev/ttyACM0", "reconnectIntervalSeconds": 9223372036854775807}}]}"#,
             "sources[0].config.reconnectIntervalSeconds", "is above the largest accepted value 3600 (seconds)"),
            (#"{"sources": [{"kind": "ble-heart-rate", "config": {"reconnect": {"maxDelaySeconds": 1e300}}}]}"#,
             "sources[0].config.reconnect.maxDelaySeconds", "1e+300 is above the largest accepted value 86400 (seconds)"),
            (#"{"sinks": [{"kind": "sqlite", "queue": {"capacity": 1e-300}}]}"#, "sinks[0].queue.capacity", "1e-300 is below the smallest accepted value 1 (records)"),
            (#"{"sinks": [{"kind": "http-repository", "config": {"url": "https://a.example", "timeoutSeconds": 1e400}}]}"#,
             "sinks[0].config.timeoutSeconds", "a number beyond ±1.8e308 is outside the accepted values 0.001 to 3600 (seconds)"),
            (#"{"shutdownTimeoutSeconds": 1e300}"#, "shutdownTimeoutSeconds", "1e+300 is above the largest accepted value 3600 (seconds)"),
        ])
    }

    func testTheProfileIsCheckedAsRunChecksIt() async throws {
        try await assertRejected([
            (#"{"profile": {"weightKilograms": -3}}"#, "profile.weightKilograms", "-3 is below the smallest accepted value 20 (kilograms)"),
            (#"{"profile": {"maximumHeartRate": 5}}"#, "profile.maximumHeartRate", "5 is below the smallest accepted value 60 (beats per minute)"),
            (#"{"profile": {"dateOfBirth": "3000-01-01"}}"#, "profile.dateOfBirth", "is not a date"),
            (#"{"profile": {"dateOfBirth": "garbage"}}"#, "profile.dateOfBirth", "is not a date"),
            (#"{"profile": {"biologicalSex": "x"}}"#, "profile.biologicalSex", #"is not one of "female", "male", "other""#),
            (#"{"profile": {"zones": "x"}}"#, "profile.zones", "expected a list of objects"),
        ])
        // `run` rejects the same file with the same message before it starts anything.
        let healthgate = try HealthgateExecutable()
        let file = healthgate.root.appendingPathComponent("profile.json")
        try Data(#"{"profile": {"weightKilograms": -3}}"#.utf8).write(to: file)
        let run = try await healthgate.run(["run", "--config", file.path, "--duration", "1"])
        XCTAssertEqual(run.status, 78, run.standardError)
        XCTAssertTrue(run.standardError.contains("profile.weightKilograms"), run.standardError)
    }

    func testControlSocketAndNULsAreRejected() async throws {
        let long = "/tmp/" + String(repeating: "s", count: 103)
        try await assertRejected([
            (#"{"controlSocket": ""}"#, "controlSocket", "must not be empty"),
            (#"{"controlSocket": "\#(long)"}"#, "controlSocket", "at most 107"),
            (#"{"store": {"path": "/tmp/a\u0000b.sqlite"}}"#, "store.path", "NUL"),
            (#"{"sources": [{"kind": "serial-pedometer", "config": {"path": "/dev/tty\u0000S0"}}]}"#, "sources[0].config.path", "NUL"),
            ("{\"store\": {\"path\": \"/tmp/a\u{0}b\"}}", "(top level)",
             "a NUL byte (0x00) inside a string"),
        ])
    }

    func testSecretsAreRedactedAndInsecureBearerIsRefused() async throws {
        let healthgate = try HealthgateExecutable()
        let (ftp, _) = try await check(
            healthgate, #"{"sinks": [{"kind": "http-repository", "config": {"url": "ftp://user:password@host/x"}}]}"#)
        XCTAssertEqual(ftp.status, 78)
        XCTAssertFalse(ftp.standardError.contains("password@"), ftp.standardError)
        XCTAssertTrue(ftp.standardError.contains("ftp://user:***@host/x"), ftp.standardError)

        let bearer = #"{"type": "bearer", "tokenVariable": "HEALTHGATE_TOKEN"}"#
        let (plain, path) = try await check(
            healthgate, #"{"sinks": [{"kind": "http-repository", "config": {"url": "http://repo.example.org/v1", "auth": \#(bearer)}}]}"#)
        XCTAssertEqual(plain.status, 78, plain.standardError)
        XCTAssertTrue(plain.standardError.contains("\(path): sinks[0].config.url: bearer credentials would cross the network in clear text"),
                      plain.standardError)
        XCTAssertTrue(plain.standardError.contains("allowInsecureTransport"), plain.standardError)

        let (allowed, _) = try await check(
            healthgate,
            #"{"sinks": [{"kind": "http-repository", "config": {"url": "http://repo.example.org/v1", "allowInsecureTransport": true, "auth": \#(bearer)}}]}"#)
        XCTAssertEqual(allowed.status, 0, allowed.standardError)
        let (loopback, _) = try await check(
            healthgate, #"{"sinks": [{"kind": "http-repository", "config": {"url": "http://127.0.0.1:8080/v1", "auth": \#(bearer)}}]}"#)
        XCTAssertEqual(loopback.status, 0, loopback.standardError)

        let missingToken = healthgate.root.appendingPathComponent("no-such-token").path
        let (token, tokenPath) = try await check(
            healthgate,
            #"{"sinks": [{"kind": "http-repository", "config": {"url": "https://repo.example.org/v1", "auth": {"type": "bearer", "tokenFile": "\#(missingToken)"}}}]}"#)
        XCTAssertEqual(token.status, 78, token.standardError)
        XCTAssertTrue(token.standardError.contains("\(tokenPath): sinks[0].config.auth.tokenFile: the token file \(missingToken) does not exist"),
                      token.standardError)
    }

    func testMissingFileIs66AndADirectoryIsNamedAsOne() async throws {
        let healthgate = try HealthgateExecutable()
        let missing = try await healthgate.run(["config", "check", "/nonexistent/healthgate.json"])
        XCTAssertEqual(missing.status, 66, missing.standardError)
        XCTAssertTrue(missing.standardError.contains("/nonexistent/healthgate.json: no such file"), missing.standardError)

        let directory = try await healthgate.run(["config", "check", healthgate.root.path])
        XCTAssertEqual(directory.status, 78, directory.standardError)
        XCTAssertTrue(directory.standardError.contains("is a directory"), directory.standardError)
        XCTAssertFalse(directory.standardError.contains("NSCocoaErrorDomain"), directory.standardError)
    }

    /// `run` without `--config` reads `$CONFIGURATION_DIRECTORY/config.json` (systemd's
    /// ConfigurationDirectory=, first of a colon-separated list) before the XDG file, and the XDG
    /// file before the embedded default. Each file here is invalid in its own way, so the error
    /// names the file that was read.
    func testRunFindsItsConfigurationInTheDocumentedOrder() async throws {
        var healthgate = try HealthgateExecutable()
        let xdg = healthgate.root.appendingPathComponent("config/healthgate")
        try FileManager.default.createDirectory(at: xdg, withIntermediateDirectories: true)
        try Data(#"{"sinksx": []}"#.utf8).write(to: xdg.appendingPathComponent("config.json"))
        let systemd = healthgate.root.appendingPathComponent("etc-healthgate")
        try FileManager.default.createDirectory(at: systemd, withIntermediateDirectories: true)
        try Data(#"{"sorces": []}"#.utf8).write(to: systemd.appendingPathComponent("config.json"))

        let fromXDG = try await healthgate.run(["run", "--duration", "0"])
        XCTAssertEqual(fromXDG.status, 78, fromXDG.standardError)
        XCTAssertTrue(fromXDG.standardError.contains("\(xdg.path)/config.json: sinksx: unknown key"), fromXDG.standardError)

        healthgate.environment["CONFIGURATION_DIRECTORY"] = systemd.path + ":/nonexistent"
        let fromSystemd = try await healthgate.run(["run", "--duration", "0"])
        XCTAssertEqual(fromSystemd.status, 78, fromSystemd.standardError)
        XCTAssertTrue(
            fromSystemd.standardError.contains("\(systemd.path)/config.json: sorces: unknown key"), fromSystemd.standardError)
    }

    func testCheckCreatesNoFile() async throws {
        let healthgate = try HealthgateExecutable()
        let json = #"""
            {"sources": [{"kind": "serial-pedometer", "config": {"udev": true}}],
             "sinks": [{"kind": "http-repository", "config": {"url": "https://repo.example.org/v1"}}, {"kind": "sqlite"}]}
            """#
        let file = healthgate.root.appendingPathComponent("config/ok.json")
        try Data(json.utf8).write(to: file)
        let result = try await healthgate.run(["config", "check", file.path])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("sink   http-repository (http-repository), follows the store"), result.standardOutput)
        for directory in ["state", "data", "runtime"] {
            let url = healthgate.root.appendingPathComponent(directory)
            let created = FileManager.default.enumerator(atPath: url.path)?.allObjects as? [String] ?? []
            XCTAssertEqual(created, [], "config check created files in \(directory)/")
        }
    }

    func testUnitsOverflowAndHugeDecodeArgumentsAreRefusedBriefly() async throws {
        let healthgate = try HealthgateExecutable()
        let overflow = try await healthgate.run(["units", "convert", "1e308", "kg", "g"])
        XCTAssertEqual(overflow.status, 65, overflow.standardOutput)
        XCTAssertFalse(overflow.standardOutput.contains("inf"), overflow.standardOutput)
        XCTAssertTrue(overflow.standardError.contains("out of range"), overflow.standardError)

        let huge = String(repeating: "z", count: 131_000)  // Just under Linux's MAX_ARG_STRLEN.
        let decode = try await healthgate.run(["decode", "heart-rate-measurement", huge])
        XCTAssertEqual(decode.status, 65)
        XCTAssertLessThan(decode.standardError.utf8.count, 1000, "the argument is not echoed whole")
        XCTAssertTrue(decode.standardError.contains("(131000 bytes) is not a hex payload"), decode.standardError)
    }
}
