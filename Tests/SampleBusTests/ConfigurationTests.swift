import Foundation
import GatewayTesting
import HealthModel
import SampleBus
import GatewayRuntime
import Synchronization
import XCTest

/// Configuration errors name the file, the exact key path and the reason.
final class ConfigurationTests: XCTestCase {
    private let catalog = PluginCatalog([.source(TickSource.self), .sink(BatchSink.self), .source(BrokenSource.self)])
    private let directory = URL(fileURLWithPath: "/nonexistent-healthgate-test")

    private func parseError(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> ConfigurationError? {
        do {
            _ = try GatewayConfiguration.parse(Data(json.utf8), origin: "/etc/healthgate.json")
            XCTFail("parsed: \(json)", file: file, line: line)
            return nil
        } catch {
            XCTAssertEqual(error.file, "/etc/healthgate.json", file: file, line: line)
            return error
        }
    }

    private func instantiateError(_ json: String, file: StaticString = #filePath, line: UInt = #line) throws -> ConfigurationError? {
        let configuration = try GatewayConfiguration.parse(Data(json.utf8), origin: "test.json")
        do {
            _ = try catalog.instantiate(configuration) { name in
                TestEnvironment.make(name: name, directory: self.directory)
            }
            XCTFail("instantiated: \(json)", file: file, line: line)
            return nil
        } catch {
            XCTAssertEqual(error.file, "test.json", file: file, line: line)
            return error
        }
    }

    // MARK: - parse

    func testEmptyObjectGivesDefaults() throws {
        let configuration = try GatewayConfiguration.parse(Data("{}".utf8), origin: "empty.json")
        XCTAssertEqual(configuration.sources, [])
        XCTAssertEqual(configuration.sinks, [])
        XCTAssertEqual(configuration.logLevel, .info)
        XCTAssertEqual(configuration.shutdownTimeoutSeconds, 10)
        XCTAssertNil(configuration.controlSocket)
        XCTAssertEqual(configuration.origin, "empty.json")
    }

    func testFullConfigurationParses() throws {
        let json = #"""
            {"sources": [{"kind": "tick", "name": "t1", "config": {"device": "a", "interval": 1.5}}],
             "sinks": [{"kind": "batch", "queue": {"capacity": 50, "policy": "dropOldest"}, "config": {"batchSize": 10}}],
             "logLevel": "debug", "shutdownTimeoutSeconds": 2.5, "controlSocket": "/run/hg.sock",
             "profile": {"maximumHeartRate": 190}}
            """#
        let configuration = try GatewayConfiguration.parse(Data(json.utf8), origin: "full.json")
        XCTAssertEqual(configuration.sources.first?.name, "t1")
        XCTAssertEqual(configuration.sources.first?.config["device"], .string("a"))
        XCTAssertEqual(configuration.sinks.first?.queue, QueueConfiguration(capacity: 50, policy: .dropOldest))
        XCTAssertEqual(configuration.logLevel, .debug)
        XCTAssertEqual(configuration.shutdownTimeoutSeconds, 2.5)
        XCTAssertEqual(configuration.controlSocket, "/run/hg.sock")
        XCTAssertEqual(configuration.profile?["maximumHeartRate"]?.doubleValue, 190)
    }

    func testBadJSONIsReportedAtTheTopLevel() {
        for json in ["", "{", #"{"sources": [}"#, "not json", #"{"sources": [1 2]}"#, #"{"a": 1}}"#] {
            let error = parseError(json)
            XCTAssertEqual(error?.keyPath, "(top level)", json)
            XCTAssertTrue(error?.reason.hasPrefix("not valid JSON") == true, "\(json): \(error?.reason ?? "")")
        }
    }

    /// A file that is not a JSON object is told what the file must be, at the top level: never
    /// an empty key path (`FILE: : expected an object`).
    func testAFileThatIsNotAnObjectIsToldWhatItMustBe() {
        for (json, given) in [(#""x""#, #"the string "x""#), ("[]", "an array"), ("3", "3"), ("null", "null"), ("true", "true")] {
            let error = parseError(json)
            XCTAssertEqual(error?.keyPath, "(top level)", json)
            XCTAssertEqual(
                error?.reason,
                #"the file must be a JSON object, such as {"sources": [...], "sinks": [...]} (every key is optional), got "#
                    + given, json)
            XCTAssertEqual(error?.description.hasPrefix("/etc/healthgate.json: (top level): the file must be"), true, json)
        }
    }

    /// Key paths are joined and rendered in one place: the whole of a value is `(top level)`,
    /// a path under another is dotted, an index appended, and a top-level inner path is its
    /// outer one; an error made with an empty path shows `(top level)`.
    func testKeyPathsAreNeverEmpty() {
        XCTAssertEqual(ConfigurationKeyPath.rendered(""), "(top level)")
        XCTAssertEqual(ConfigurationKeyPath.rendered("store.path"), "store.path")
        XCTAssertEqual(ConfigurationKeyPath.joining("sources[0].config", "interval"), "sources[0].config.interval")
        XCTAssertEqual(ConfigurationKeyPath.joining("sources[0].config", "[2]"), "sources[0].config[2]")
        XCTAssertEqual(ConfigurationKeyPath.joining("sources[0].config", "(top level)"), "sources[0].config")
        XCTAssertEqual(ConfigurationKeyPath.joining("sources[0].config", ""), "sources[0].config")
        XCTAssertEqual(ConfigurationKeyPath.joining("", "logLevel"), "logLevel")
        XCTAssertEqual(ConfigurationKeyPath.joining("(top level)", "[0]"), "[0]")
        XCTAssertEqual(ConfigurationKeyPath.joining("", ""), "(top level)")
        XCTAssertEqual(PluginConfigurationError(keyPath: "", reason: "r").keyPath, "(top level)")
        XCTAssertEqual(PluginConfigurationError(keyPath: "", reason: "r").description, "(top level): r")
        XCTAssertEqual(ConfigurationError(file: "f.json", keyPath: "", reason: "r").description, "f.json: (top level): r")
        // The schema's problems at the top of what it checks.
        let problems = ConfigurationSchema.object([ConfigurationProperty("a", .text, "A key")]).problems(in: .string("x"))
        XCTAssertEqual(problems.map(\.keyPath), ["(top level)"])
        XCTAssertEqual(problems.first?.reason, #"expected an object, got the string "x""#)
    }

    func testWrongTypesNameTheExactKeyPath() {
        let rows: [(String, String, String)] = [
            (#"{"sources": {}}"#, "sources", "expected an array"),
            (#"{"sources": [{"kind": "tick"}, {"kind": 5}]}"#, "sources[1].kind", "expected a string"),
            (#"{"sources": [{"name": "x"}]}"#, "sources[0].kind", "required key \"kind\" is missing"),
            (#"{"sinks": [{"kind": "batch", "name": 3}]}"#, "sinks[0].name", "expected a string"),
            (#"{"sinks": [{"kind": "batch", "queue": {"capacity": "ten"}}]}"#, "sinks[0].queue.capacity",
             "expected a whole number"),
            (#"{"sinks": [{"kind": "batch", "queue": {"capacity": 0}}]}"#, "sinks[0].queue.capacity",
             "out of range: 0; allowed 1…10000000 records"),
            (#"{"sinks": [{"kind": "batch", "queue": {"policy": "sometimes"}}]}"#, "sinks[0].queue.policy",
             "sometimes"),
            (#"{"logLevel": "loud"}"#, "logLevel", "loud"),
            (#"{"shutdownTimeoutSeconds": "soon"}"#, "shutdownTimeoutSeconds", "expected a number"),
            (#"{"shutdownTimeoutSeconds": 0}"#, "shutdownTimeoutSeconds", "out of range: 0; allowed 0.1…3600 seconds"),
            (#"{"controlSocket": false}"#, "controlSocket", "expected a string"),
        ]
        for (json, keyPath, reason) in rows {
            let error = parseError(json)
            XCTAssertEqual(error?.keyPath, keyPath, json)
            XCTAssertTrue(error?.reason.contains(reason) == true, "\(json): \(error?.reason ?? "nil")")
            XCTAssertEqual(error?.description.hasPrefix("/etc/healthgate.json: \(keyPath): "), true)
        }
    }

    /// The `bluetooth` section is carried, not decoded: the Bluetooth family decodes it
    /// (BLEProfileKitTests' BluetoothConfigurationTests).
    func testTheBluetoothSectionIsCarriedAsItIs() throws {
        let configuration = try GatewayConfiguration.parse(
            Data(#"{"bluetooth": {"adapterLimits": {"connections": 7}}}"#.utf8), origin: "bt.json")
        XCTAssertEqual(configuration.bluetooth, ["adapterLimits": ["connections": 7]])
        XCTAssertNil(try GatewayConfiguration.parse(Data("{}".utf8), origin: "empty.json").bluetooth)
    }

    func testLoadNamesTheFile() throws {
        let missing = URL(fileURLWithPath: "/nonexistent-healthgate-test/config.json")
        XCTAssertThrowsError(try GatewayConfiguration.load(from: missing)) { error in
            let error = error as? ConfigurationError
            XCTAssertEqual(error?.file, missing.path)
            XCTAssertEqual(error?.keyPath, "(file)")
        }
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("healthgate.json")
        try Data(#"{"sinks": [{"kind": "batch", "queue": {"capacity": -1}}]}"#.utf8).write(to: file)
        XCTAssertThrowsError(try GatewayConfiguration.load(from: file)) { error in
            let error = error as? ConfigurationError
            XCTAssertEqual(error?.file, file.path)
            XCTAssertEqual(error?.keyPath, "sinks[0].queue.capacity")
        }
    }

    // MARK: - instantiate

    func testInstantiateBuildsEveryPluginWithItsName() throws {
        let json = #"""
            {"sources": [{"kind": "tick", "config": {"device": "a", "interval": 1}},
                         {"kind": "tick", "name": "second", "config": {"device": "b", "interval": 2}}],
             "sinks": [{"kind": "batch"}, {"kind": "batch", "config": {"batchSize": 7}}]}
            """#
        let configuration = try GatewayConfiguration.parse(Data(json.utf8), origin: "ok.json")
        let environments = Locked<[String]>([])
        let built = try catalog.instantiate(configuration) { name in
            environments.withLock { $0.append(name) }
            return TestEnvironment.make(name: name, directory: self.directory)
        }
        let (sources, sinks) = (built.sources, built.sinks)
        XCTAssertEqual(sources.map(\.name), ["tick-0", "second"])
        XCTAssertEqual(sources.map(\.kind), ["tick", "tick"])
        XCTAssertEqual((sources.first?.source as? TickSource)?.name, "tick-0", "the environment carries the name")
        XCTAssertEqual((sources.last?.source as? TickSource)?.configuration.interval, 2)
        XCTAssertEqual(sinks.map(\.name), ["batch-0", "batch-1"])
        XCTAssertEqual((sinks.last?.sink as? BatchSink)?.configuration.batchSize, 7)
        XCTAssertEqual((sinks.first?.sink as? BatchSink)?.configuration.batchSize, 100, "an absent config is {}")
        XCTAssertEqual(sinks.first?.queue, QueueConfiguration())
        XCTAssertEqual(environments.value, ["tick-0", "second", "batch-0", "batch-1"])
        XCTAssertEqual(catalog.entry(kind: "batch")?.role, .sink)
        XCTAssertEqual(catalog.entry(kind: "tick")?.summary, "ticks for tests")
        XCTAssertNil(catalog.entry(kind: "nope"))
    }

    func testInstantiateErrorsNameTheExactKeyPath() throws {
        let tick = #"{"kind": "tick", "config": {"device": "a", "interval": 1}}"#
        let rows: [(String, String, String)] = [
            (#"{"sources": [\#(tick), {"kind": "bluetooth"}]}"#, "sources[1].kind",
             "unknown plugin kind \"bluetooth\" (known: tick, batch, broken)"),
            (#"{"sources": [{"kind": "batch"}]}"#, "sources[0].kind", "\"batch\" is a sink, not a source"),
            (#"{"sinks": [{"kind": "tick"}]}"#, "sinks[0].kind", "\"tick\" is a source, not a sink"),
            (#"{"sinks": [{"kind": "batch", "config": {"batchSize": "big"}}]}"#, "sinks[0].config.batchSize",
             "expected a whole number"),
            (#"{"sinks": [{"kind": "batch", "config": {"batchSize": 2.5}}]}"#, "sinks[0].config.batchSize",
             "2.5 is not a whole number"),
            (#"{"sinks": [{"kind": "batch", "config": {"batchSize": 0}}]}"#, "sinks[0].config.batchSize",
             "0 is below the smallest accepted value 1 (records)"),
            (#"{"sources": [{"kind": "tick", "config": {"interval": 1}}]}"#, "sources[0].config.device",
             "required key \"device\" is missing"),
            (#"{"sources": [{"kind": "tick", "config": {"device": "a", "interval": 0}}]}"#,
             "sources[0].config.interval", "0 is below the smallest accepted value 0.001 (seconds)"),
            (#"{"sources": [\#(tick), {"kind": "tick", "config": {"device": "b", "interval": true}}]}"#,
             "sources[1].config.interval", "expected a number"),
            (#"{"sources": [{"kind": "tick", "config": {"device": "a", "interval": 1, "devices": [{"address": "x"}, {}]}}]}"#,
             "sources[0].config.devices[1].address", "required key \"address\" is missing"),
            (#"{"sources": [{"kind": "tick", "config": {"device": "a", "interval": 1, "devices": [{"address": ""}]}}]}"#,
             "sources[0].config.devices[0].address", "must not be empty"),
            (#"{"sources": [{"kind": "tick", "config": 5}]}"#, "sources[0].config", "expected an object"),
            (#"{"sources": [{"kind": "broken"}]}"#, "sources[0]", "adapter hci0 is powered off"),
            (#"{"sinks": [{"kind": "batch", "name": "store"}, {"kind": "batch", "name": "store"}]}"#,
             "sinks[1].name", "the name \"store\" is used twice"),
            (#"{"sources": [\#(tick)], "sinks": [{"kind": "batch", "name": "tick"}]}"#,
             "sinks[0].name", "the name \"tick\" is used twice"),
        ]
        for (json, keyPath, reason) in rows {
            let error = try instantiateError(json)
            XCTAssertEqual(error?.keyPath, keyPath, json)
            XCTAssertTrue(error?.reason.contains(reason) == true, "\(json): \(error?.reason ?? "nil")")
        }
    }
}
