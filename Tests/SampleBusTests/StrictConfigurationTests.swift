import Foundation
import GatewayTesting
import GatewayRuntime
import SampleBus
import XCTest

/// The configuration contract: strict decoding at every level with a did-you-mean, every number
/// range-checked without a trap, NULs refused, credentials redacted, and `validate` doing what
/// `instantiate` checks without building anything.
final class StrictConfigurationTests: XCTestCase {
    private let catalog = PluginCatalog([.source(TickSource.self), .sink(BatchSink.self), .source(BrokenSource.self)])

    private func parseError(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> ConfigurationError? {
        do {
            let configuration = try GatewayConfiguration.parse(Data(json.utf8), origin: "/etc/healthgate.json")
            try catalog.validate(configuration) { name in
                TestEnvironment.make(name: name, directory: URL(fileURLWithPath: "/nonexistent-healthgate-test"))
            }
            XCTFail("accepted: \(json)", file: file, line: line)
            return nil
        } catch {
            XCTAssertEqual(error.file, "/etc/healthgate.json", file: file, line: line)
            return error
        }
    }

    /// A configuration with a refused key, decoded on its own (no schema pass first).
    private struct Secretive: DeclaredConfiguration, Hashable {
        var host = ""
        var passwordFile: String?
        var retries = 3
        static var configurationKeys: [ConfigurationKey<Self>] {
            [
                ConfigurationKey("host", \.host, .text, "The host"),
                ConfigurationKey("passwordFile", \.passwordFile, .text, "Where the password is"),
                ConfigurationKey("retries", \.retries, .whole(0...9, unit: "attempts"), "How often to retry"),
                .refused("password", "secrets are never written inline; use passwordFile"),
            ]
        }
    }

    /// Issue #45: the decoder never offers a refused key, and a prefix or another case of a
    /// key's name is suggested.
    func testTheDecoderOffersNoRefusedKeyAndSuggestsByPrefixAndCase() {
        func reason(_ json: String) -> String {
            do {
                _ = try ConfigurationDecoder.decode(Secretive.self, from: try ConfigurationJSONParser.parse(Data(json.utf8)))
                return "accepted"
            } catch let error as DecodingError {
                return error.reason
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(reason(#"{"xyzzy": 1}"#), #"unknown key "xyzzy"; known keys: host, passwordFile, retries"#)
        XCTAssertEqual(reason(#"{"retr": 1}"#), #"unknown key "retr"; did you mean "retries"?"#)
        XCTAssertEqual(reason(#"{"HOST": "a"}"#), #"unknown key "HOST"; did you mean "host"?"#)
        XCTAssertEqual(reason(#"{"password": "a"}"#), "secrets are never written inline; use passwordFile")
        XCTAssertEqual(KeySuggestion.suggestion(for: "baud", among: ["baudRate", "dataBits", "stopBits"]), "baudRate")
        XCTAssertNil(KeySuggestion.suggestion(for: "ba", among: ["baudRate"]), "two letters are no prefix to go by")
    }

    /// Issue #45: the schema suggests only a key that takes the value given, and reports every
    /// unknown key and number out of range.
    func testTheSchemaSuggestsAKeyThatTakesTheValueAndReportsEveryProblem() {
        let problems = Secretive.configurationSchema.problems(
            in: ["hostname": 3, "retriesMax": "x", "password": "p", "retries": 12, "passwordfile": "/p"])
        XCTAssertEqual(problems.map(\.keyPath), ["hostname", "password", "passwordfile", "retries", "retriesMax"])
        XCTAssertEqual(problems.map(\.reason), [
            // "host" is near, but takes a string: no suggestion rather than one that refuses 3.
            #"unknown key "hostname"; known keys: host, passwordFile, retries"#,
            "secrets are never written inline; use passwordFile",
            #"unknown key "passwordfile"; did you mean "passwordFile"?"#,
            "12 is above the largest accepted value 9 (attempts)",
            #"unknown key "retriesMax"; known keys: host, passwordFile, retries"#,
        ])
    }

    func testUnknownKeysAreErrorsAtEveryLevelWithASuggestion() {
        let rows: [(String, String, String)] = [
            (#"{"sorces": []}"#, "sorces", #"unknown key "sorces"; did you mean "sources"?"#),
            (#"{"sinksx": []}"#, "sinksx", #"did you mean "sinks"?"#),
            (#"{"contrlSocket": "/run/x.sock"}"#, "contrlSocket", #"did you mean "controlSocket"?"#),
            (#"{"sinks": [{"kind": "batch", "queue": {"polcy": "block"}}]}"#, "sinks[0].queue.polcy",
             #"did you mean "policy"?"#),
            (#"{"sinks": [{"kind": "batch", "nmae": "x"}]}"#, "sinks[0].nmae", #"did you mean "name"?"#),
            (#"{"sinks": [{"kind": "batch", "config": {"batchSiz": 3}}]}"#, "sinks[0].config.batchSiz",
             #"did you mean "batchSize"?"#),
            (#"{"sources": [{"kind": "tick", "config": {"device": "a", "interval": 1, "devices": [{"address": "x", "adress": "y"}]}}]}"#,
             "sources[0].config.devices[0].adress", #"did you mean "address"?"#),
            (#"{"sources": [{"kind": "broken", "config": {"anything": 1}}]}"#, "sources[0].config.anything",
             "this object takes no keys"),
            (#"{"sinks": [{"kind": "batch", "config": {"zzzzzzzz": 3}}]}"#, "sinks[0].config.zzzzzzzz",
             "known keys: batchSize"),
        ]
        for (json, keyPath, reason) in rows {
            let error = parseError(json)
            XCTAssertEqual(error?.keyPath, keyPath, json)
            XCTAssertTrue(error?.reason.contains(reason) == true, "\(json): \(error?.reason ?? "nil")")
        }
    }

    func testAMisspeltRequiredKeyIsNamedAsTheTypo() {
        let error = parseError(#"{"sources": [{"kind": "tick", "config": {"devise": "a", "interval": 1}}]}"#)
        XCTAssertEqual(error?.keyPath, "sources[0].config.devise")
        XCTAssertTrue(error?.reason.contains(#"did you mean "device"?"#) == true, error?.reason ?? "")
    }

    func testARenamedKeySuggestsItsNewName() throws {
        struct Retry: Decodable, RenamedConfigurationKeys {
            var maxDelaySeconds: Double?
            static let renamedKeys = ["maximumDelayMilliseconds": "maxDelaySeconds"]
        }
        XCTAssertThrowsError(try JSONValue.object(["maximumDelayMilliseconds": .number(5)]).decodeStrictly(Retry.self)) { error in
            let error = error as? DecodingError
            XCTAssertEqual(error?.keyPath, "maximumDelayMilliseconds")
            XCTAssertTrue(error?.reason.contains(#"did you mean "maxDelaySeconds"?"#) == true, error?.reason ?? "")
        }
        XCTAssertEqual(try JSONValue.object(["maxDelaySeconds": .number(5)]).decodeStrictly(Retry.self).maxDelaySeconds, 5)
    }

    func testNumbersOutOfRangeAreReportedWithTheRangeAndNeverTrap() {
        let rows: [(String, String, String)] = [
            (#"{"sinks": [{"kind": "batch", "queue": {"capacity": 1e18}}]}"#, "sinks[0].queue.capacity",
             "out of range: 1e+18 (a whole number from"),
            (#"{"sinks": [{"kind": "batch", "queue": {"capacity": 1e300}}]}"#, "sinks[0].queue.capacity", "out of range"),
            (#"{"sinks": [{"kind": "batch", "queue": {"capacity": 9223372036854775807}}]}"#, "sinks[0].queue.capacity",
             "out of range"),
            (#"{"sinks": [{"kind": "batch", "queue": {"capacity": 1e-300}}]}"#, "sinks[0].queue.capacity",
             "out of range: 1e-300 is not a whole number"),
            (#"{"sinks": [{"kind": "batch", "queue": {"capacity": -1e400}}]}"#, "sinks[0].queue.capacity",
             "out of range: a number beyond ±1.8e308"),
            (#"{"shutdownTimeoutSeconds": 1e400}"#, "shutdownTimeoutSeconds", "out of range: a number beyond ±1.8e308"),
            (#"{"shutdownTimeoutSeconds": 1e300}"#, "shutdownTimeoutSeconds", "allowed 0.1…3600 seconds"),
            (#"{"shutdownTimeoutSeconds": 1e-300}"#, "shutdownTimeoutSeconds", "allowed 0.1…3600 seconds"),
            (#"{"sinks": [{"kind": "batch", "config": {"batchSize": 1e9}}]}"#, "sinks[0].config.batchSize",
             "1000000000 is above the largest accepted value 100000 (records)"),
            (#"{"sources": [{"kind": "tick", "config": {"device": "a", "interval": 1e400}}]}"#,
             "sources[0].config.interval", "a number beyond ±1.8e308 is outside the accepted values 0.001 to 3600 (seconds)"),
        ]
        for (json, keyPath, reason) in rows {
            let error = parseError(json)
            XCTAssertEqual(error?.keyPath, keyPath, json)
            XCTAssertTrue(error?.reason.contains(reason) == true, "\(json): \(error?.reason ?? "nil")")
            XCTAssertFalse(error?.reason.contains("not valid JSON") ?? true, json)
        }
    }

    func testNULBytesAndEscapedNULsAreRefusedAsSuch() {
        let raw = parseError("{\"controlSocket\": \"/run/a\u{0}b\"}")
        XCTAssertEqual(raw?.keyPath, "(top level)")
        XCTAssertTrue(raw?.reason.contains("a NUL byte (0x00) inside a string") == true, raw?.reason ?? "")
        XCTAssertTrue(raw?.reason.contains("line 1, column 26") == true, raw?.reason ?? "")

        let escaped = parseError(#"{"controlSocket": "/run/a\u0000b"}"#)
        XCTAssertEqual(escaped?.keyPath, "controlSocket")
        XCTAssertTrue(escaped?.reason.contains("NUL character") == true, escaped?.reason ?? "")

        let inPlugin = parseError(#"{"sources": [{"kind": "tick", "config": {"device": "a\u0000", "interval": 1}}]}"#)
        XCTAssertEqual(inPlugin?.keyPath, "sources[0].config.device")
    }

    func testControlSocketMustFitASocketAddress() {
        XCTAssertEqual(parseError(#"{"controlSocket": ""}"#)?.keyPath, "controlSocket")
        let long = "/run/" + String(repeating: "s", count: 103)  // 108 bytes: no room for the NUL.
        let error = parseError(#"{"controlSocket": "\#(long)"}"#)
        XCTAssertEqual(error?.keyPath, "controlSocket")
        XCTAssertTrue(error?.reason.contains("108 bytes") == true, error?.reason ?? "")
        let fits = "/run/" + String(repeating: "s", count: 102)
        XCTAssertNoThrow(try GatewayConfiguration.parse(Data(#"{"controlSocket": "\#(fits)"}"#.utf8), origin: "ok.json"))
    }

    func testSyntaxErrorsNameLineAndColumnAndHostileNestingIsRefused() {
        let duplicate = parseError("{\n  \"logLevel\": \"info\",\n  \"logLevel\": \"debug\"}")
        XCTAssertTrue(duplicate?.reason.contains("line 3, column 3") == true, duplicate?.reason ?? "")
        XCTAssertTrue(duplicate?.reason.contains("appears twice") == true, duplicate?.reason ?? "")
        let deep = parseError(String(repeating: "[", count: 100_000))
        XCTAssertTrue(deep?.reason.contains("nesting deeper than 64") == true, deep?.reason ?? "")
        let leadingZero = parseError(#"{"shutdownTimeoutSeconds": 010}"#)
        XCTAssertTrue(leadingZero?.reason.contains("leading zeros") == true, leadingZero?.reason ?? "")
    }

    func testCredentialsInURLsAreRedactedInEveryMessage() {
        let error = ConfigurationError(
            file: "a.json", keyPath: "sinks[0].config.url",
            reason: #""ftp://user:password@host/x" is not an http:// or https:// URL"#)
        XCTAssertFalse(error.description.contains("password"), error.description)
        XCTAssertTrue(error.description.contains("ftp://user:***@host/x"), error.description)
        let plugin = PluginConfigurationError(keyPath: "url", reason: "https://s3cr3t@example.org and http://a:b@c:80?q")
        XCTAssertEqual(plugin.reason, "https://***@example.org and http://a:***@c:80?q")
        XCTAssertEqual(CredentialRedaction.redact("no url here: a@b"), "no url here: a@b")
    }

    func testValidateChecksEverythingInstantiateChecksWithoutBuildingPlugins() throws {
        // BrokenSource fails only when built: validation never builds a plugin.
        let json = #"{"sources": [{"kind": "broken"}, {"kind": "tick", "config": {"device": "a", "interval": 1}}], "sinks": [{"kind": "batch"}]}"#
        let configuration = try GatewayConfiguration.parse(Data(json.utf8), origin: "ok.json")
        let plugins = try catalog.validate(configuration) { name in
            TestEnvironment.make(name: name, directory: URL(fileURLWithPath: "/nonexistent-healthgate-test"))
        }
        XCTAssertEqual(plugins.map(\.name), ["broken", "tick", "batch"])
        XCTAssertEqual(plugins.map(\.queue), [nil, nil, QueueConfiguration()])
        XCTAssertThrowsError(try catalog.instantiate(configuration) { name in
            TestEnvironment.make(name: name, directory: URL(fileURLWithPath: "/nonexistent-healthgate-test"))
        })
    }

    func testKeySuggestion() {
        XCTAssertEqual(KeySuggestion.closest(to: "weightKilogrAms", among: ["weightKilograms", "zones"]), "weightKilograms")
        XCTAssertEqual(KeySuggestion.closest(to: "gip", among: ["gzip", "url"]), "gzip")
        XCTAssertNil(KeySuggestion.closest(to: "completely", among: ["gzip", "url"]))
        XCTAssertEqual(KeySuggestion.editDistance(Array("kitten"), Array("sitting")), 3)
    }
}
