import ANTHeartRate
import ANTProtocol
import Foundation
import GatewayRuntime
import GatewayTesting
import SampleBus
import SerialDevices
import XCTest

/// The configuration: the sample decodes and validates, the network key is read from its file
/// (by default in the configuration directory), and a missing or malformed key file is an error
/// at `networkKeyFile` that says where ANT+ adopters get the key and never shows its content.
final class ConfigurationTests: TemporaryDirectoryTestCase {
    override class var directoryPrefix: String { "ant-config" }

    private func settings(_ config: JSONValue, variables: [String: String] = [:]) throws -> ANTHeartRateSettings {
        let environment = TestEnvironment.make(directory: directory, variables: variables)
        return try config.decodeStrictly(ANTHeartRateConfiguration.self).validated(in: environment)
    }

    func testTheKeyFileIsReadAndTheDefaultIsInTheConfigurationDirectory() throws {
        let key = ANTNetworkKey.random()
        let hex = key.bytes.map { String(format: "%02X", $0) }.joined(separator: " ")
        let configDirectory = directory.appendingPathComponent("healthgate")
        try FileManager.default.createDirectory(at: configDirectory, withIntermediateDirectories: true)
        try (hex + "\n").write(to: configDirectory.appendingPathComponent("ant-network-key"), atomically: true, encoding: .utf8)
        let byDefault = try settings(.object([:]), variables: ["XDG_CONFIG_HOME": directory.path])
        XCTAssertEqual(byDefault.networkKey, key)
        XCTAssertEqual(byDefault.endpoint, .udev, "without a path every stick udev tags")
        XCTAssertEqual(byDefault.lostAfter, 5)
        XCTAssertEqual(
            ANTHeartRateConfiguration.defaultNetworkKeyFile(variables: ["CONFIGURATION_DIRECTORY": "/etc/healthgate"]),
            "/etc/healthgate/ant-network-key")
        let named = directory.appendingPathComponent("key.txt")
        try key.bytes.map { String(format: "0x%02x", $0) }.joined(separator: ",").write(to: named, atomically: true, encoding: .utf8)
        let explicit = try settings(.object([
            "transport": .string("stick"), "path": .string("/dev/healthgate/ant-123"), "networkKeyFile": .string(named.path),
            "lostAfterSeconds": .number(8),
        ]))
        XCTAssertEqual(explicit.networkKey, key)
        XCTAssertEqual(explicit.endpoint, .path("/dev/healthgate/ant-123"))
        XCTAssertEqual(explicit.lostAfter, 8)
    }

    func testAMissingOrMalformedKeyIsAConfigurationErrorThatSaysWhereToGetIt() throws {
        let missing = directory.appendingPathComponent("nope")
        XCTAssertThrowsError(try settings(.object(["networkKeyFile": .string(missing.path)]))) { error in
            let error = error as? PluginConfigurationError
            XCTAssertEqual(error?.keyPath, "networkKeyFile")
            XCTAssertTrue(error?.reason.contains("does not exist") == true, "\(String(describing: error))")
            XCTAssertTrue(error?.reason.contains("ANT+ Adopter") == true)
        }
        // Seven bytes of a would-be key: refused, and never echoed.
        let malformed = directory.appendingPathComponent("short")
        try "A1 B2 C3 D4 E5 F6 17".write(to: malformed, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try settings(.object(["networkKeyFile": .string(malformed.path)]))) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("does not hold 8 bytes as hex"), text)
            XCTAssertFalse(text.contains("A1") || text.contains("E5"), "the file's content is never shown: \(text)")
        }
    }

    func testTheSimulatedStickNeedsNoKeyAndNoPath() throws {
        let simulated = try settings(.object(["transport": .string("simulated"), "simulation": .object(["straps": .number(30)])]))
        XCTAssertEqual(simulated.straps, 30)
        XCTAssertEqual(simulated.transport, .simulated)
        XCTAssertThrowsError(try settings(.object(["transport": .string("simulated"), "path": .string("/dev/ttyUSB0")])))
        XCTAssertThrowsError(try settings(.object(["transport": .string("simulated"), "simulation": .object(["straps": .number(0)])])))
        XCTAssertThrowsError(try settings(.object(["transport": .string("bluetooth")])))
        XCTAssertThrowsError(try settings(.object(["lostAfterSeconds": .number(0)])))
    }

    func testTheSampleConfigurationDecodes() throws {
        let sample = TestEnvironment.sampleConfigurationURL()
        let document = try ConfigurationJSONParser.parse(Data(contentsOf: sample))
        guard case .object(let root) = document, case .array(let sources)? = root["sources"] else { return XCTFail("no sources") }
        XCTAssertFalse(sources.isEmpty)
        let key = directory.appendingPathComponent("ant-network-key")
        try ANTNetworkKey.random().bytes.map { String(format: "%02X", $0) }.joined().write(to: key, atomically: true, encoding: .utf8)
        for source in sources {
            guard case .object(let entry) = source, case .object(var config)? = entry["config"] else { return XCTFail("no config") }
            if config["networkKeyFile"] != nil { config["networkKeyFile"] = .string(key.path) }
            XCTAssertNoThrow(try settings(.object(config), variables: ["CONFIGURATION_DIRECTORY": directory.path]))
        }
    }
}
