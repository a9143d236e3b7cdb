import BLEProfileKit
import BLETesting
import Foundation
import GatewayTesting
import HealthModel
import HeartRateMonitor
import GatewayRuntime
import SampleBus
import XCTest

final class ConfigurationTests: XCTestCase {
    func environment() throws -> PluginEnvironment {
        TestEnvironment.make(name: "hr", directory: FileManager.default.temporaryDirectory)
    }

    func testSampleConfigDecodesAndBuilds() throws {
        // Built with a fake transport: the BlueZ transport is not part of these tests.
        let configurations = try HeartRateProfile.sampleSourceConfigurations(count: 3, environmentName: "hr")
        let strap = configurations[0]
        XCTAssertEqual(strap.transport, .bluez)
        XCTAssertEqual(strap.adapter, "hci0")
        XCTAssertEqual(strap.devices, .matching([.address("A0:9E:1A:12:34:56"), .name("Polar H10 *")]))
        XCTAssertEqual(strap.reconnect, ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(60), multiplier: 2))
        XCTAssertEqual(configurations[1].devices, .any)
        XCTAssertEqual(configurations[1].effectiveMaxDevices, 2)
        XCTAssertEqual(configurations[2].transport, .simulated)
        XCTAssertEqual(configurations[2].effectiveMaxDevices, 2)
        // The simulated one builds through the public initializer too.
        _ = try HeartRateSource(settings: configurations[2].validated(in: environment()), environment: try environment())
    }

    func testDefaults() throws {
        let configuration = try JSONValue.object([:]).decodeStrictly(HeartRateSourceConfiguration.self)
        XCTAssertEqual(configuration, HeartRateSourceConfiguration())
        XCTAssertEqual(configuration.transport, .bluez)
        XCTAssertEqual(configuration.devices, .any)
        XCTAssertEqual(configuration.effectiveMaxDevices, 1)
    }

    func testBadConfigurationsNameTheKey() throws {
        func decodingKeyPath(_ json: String) -> String? {
            do {
                _ = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)).decodeStrictly(HeartRateSourceConfiguration.self)
                return nil
            } catch let error as DecodingError {
                return error.keyPath
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(decodingKeyPath(#"{"transport": "usb"}"#), "transport")
        XCTAssertEqual(decodingKeyPath(#"{"devices": "all"}"#), "devices")
        XCTAssertEqual(decodingKeyPath(#"{"devices": [{"address": "AA:BB"}]}"#), "devices[0].address")
        XCTAssertEqual(decodingKeyPath(#"{"devices": [{"address": "AA:BB:CC:DD:EE:FF", "name": "x"}]}"#), "devices[0]")
        XCTAssertEqual(decodingKeyPath(#"{"devices": []}"#), "devices")
        XCTAssertEqual(decodingKeyPath(#"{"maxDevice": 2}"#), "maxDevice")
        XCTAssertEqual(decodingKeyPath(#"{"reconnect": {"initialDelaySeconds": 0}}"#), "reconnect.initialDelaySeconds")
        XCTAssertEqual(decodingKeyPath(#"{"reconnect": {"initialDelaySeconds": 5, "maxDelaySeconds": 1}}"#), "reconnect.maxDelaySeconds")
        XCTAssertEqual(decodingKeyPath(#"{"simulation": {"hrms": 1}}"#), "simulation.hrms")
        XCTAssertNil(decodingKeyPath(#"{"devices": ["aa:bb:cc:dd:ee:ff", "TICKR*"]}"#))

        func pluginKeyPath(_ configuration: HeartRateSourceConfiguration) throws -> String? {
            do {
                _ = try HeartRateSource(settings: configuration.validated(in: environment()), environment: try environment(), bluetooth: .scripted(FakeBLETransport(profiles: []), clock: try environment().clock))
                return nil
            } catch let error as PluginConfigurationError {
                return error.keyPath
            }
        }
        XCTAssertEqual(try pluginKeyPath(HeartRateSourceConfiguration(maxDevices: 0)), "maxDevices")
        XCTAssertEqual(try pluginKeyPath(HeartRateSourceConfiguration(adapter: "")), "adapter")
        XCTAssertEqual(try pluginKeyPath(HeartRateSourceConfiguration(profile: HeartRateProfileConfiguration(heartbeatSeriesSeconds: 0))), "heartbeatSeriesSeconds")
        XCTAssertEqual(
            try pluginKeyPath(HeartRateSourceConfiguration(
                transport: .simulated,
                profile: HeartRateProfileConfiguration(simulation: HeartRateSimulationConfiguration(heartRateMonitors: 0, footPods: 0)))),
            "simulation")
        XCTAssertEqual(
            try pluginKeyPath(HeartRateSourceConfiguration(profile: HeartRateProfileConfiguration(simulation: HeartRateSimulationConfiguration(notificationsPerSecond: 0)))),
            "simulation.notificationsPerSecond")
    }

    func testStringMatchersAreAddressesOrNamePatterns() throws {
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"devices": ["aa:bb:cc:dd:ee:ff", "TICKR*"]}"#.utf8))
        let configuration = try value.decodeStrictly(HeartRateSourceConfiguration.self)
        XCTAssertEqual(configuration.devices, .matching([.address("AA:BB:CC:DD:EE:FF"), .name("TICKR*")]))
    }

    /// A source's `adapterLimits` (earlier versions took them per source, and the first source
    /// on an adapter silently won) is refused with the place the limits moved to.
    func testAdapterLimitsInASourceSayWhereTheyMoved() throws {
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"adapterLimits": {"connections": 2}}"#.utf8))
        XCTAssertThrowsError(try value.decodeStrictly(HeartRateSourceConfiguration.self)) { error in
            guard let error = error as? PluginConfigurationError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.keyPath, "adapterLimits")
            XCTAssertTrue(error.reason.contains(#""bluetooth": {"adapterLimits": {…}}"#), error.reason)
        }
    }
}
