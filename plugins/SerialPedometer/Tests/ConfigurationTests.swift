import Foundation
import GatewayTesting
import LinuxSystem
import GatewayRuntime
import SampleBus
import SerialDevices
import SerialPedometer
import Udev
import XCTest

final class ConfigurationTests: XCTestCase {
    func environment() throws -> PluginEnvironment {
        TestEnvironment.make(directory: FileManager.default.temporaryDirectory)
    }

    func testSampleConfigurationBuildsEverySource() throws {
        let url = TestEnvironment.sampleConfigurationURL()
        let file = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: url))
        guard case .array(let sources)? = file["sources"] else { return XCTFail("no sources") }
        var endpoints: [SerialPedometerSource.Endpoint] = []
        for entry in sources {
            XCTAssertEqual(entry["kind"]?.stringValue, SerialPedometerSource.kind)
            let config = try XCTUnwrap(entry["config"]).decodeStrictly(SerialPedometerConfiguration.self)
            endpoints.append(try SerialPedometerSource(settings: config.validated(in: environment()), environment: environment()).endpoint)
        }
        XCTAssertEqual(endpoints.count, 3)
        XCTAssertEqual(endpoints[0], .udev)
        XCTAssertEqual(endpoints[1], .path("/dev/healthgate/pedometer-0525-a4a7"))
        if case .rfcomm(let address, let channel) = endpoints[2] {
            XCTAssertEqual(address.description, "00:1A:7D:DA:71:13")
            XCTAssertEqual(channel, 1)
        } else {
            XCTFail("expected rfcomm, got \(endpoints[2])")
        }
    }

    func testBadConfigurationsNameTheKey() throws {
        let cases: [([String: JSONValue], String, String)] = [
            ([:], "path", "exactly one"),
            (["path": .string("/dev/x"), "udev": .bool(true)], "path", "exactly one"),
            (["path": .string("ttyUSB0")], "path", "absolute"),
            (["rfcomm": .object(["address": .string("nope"), "channel": .number(1)])], "rfcomm.address", "Bluetooth address"),
            (["rfcomm": .object(["address": .string("00:11:22:33:44:55"), "channel": .number(31)])], "rfcomm.channel", "allowed 1…30"),
            (["udev": .bool(true), "baudRate": .number(1234)], "baudRate", "termios"),
            (["udev": .bool(true), "dataBits": .number(9)], "dataBits", "allowed 5…8"),
            (["udev": .bool(true), "stopBits": .number(3)], "stopBits", "allowed 1…2"),
            (["udev": .bool(true), "decoder": .string("nmea")], "decoder", "unknown decoder"),
            (["udev": .bool(true), "maxLineLength": .number(5)], "maxLineLength", "allowed 16…4096 bytes"),
            (["udev": .bool(true), "reconnectIntervalSeconds": .number(0)], "reconnectIntervalSeconds", "out of range"),
        ]
        for (config, keyPath, fragment) in cases {
            XCTAssertThrowsError(
                try JSONValue.object(config).decodeStrictly(SerialPedometerConfiguration.self).validated(in: environment())
            ) { error in
                let error = error as? PluginConfigurationError
                XCTAssertEqual(error?.keyPath, keyPath, "\(config)")
                XCTAssertTrue(error?.reason.contains(fragment) ?? false, "\(String(describing: error))")
            }
        }
        XCTAssertThrowsError(
            try JSONValue.object(["udev": .bool(true), "parity": .string("mark")]).decodeStrictly(SerialPedometerConfiguration.self)
        ) { error in
            XCTAssertEqual((error as? DecodingError)?.keyPath, "parity")
        }
    }

    func testUdevMatchIsOurRulesTagWithTheCompiledInProtocols() {
        let match = SerialPedometerSource.udevMatch
        XCTAssertEqual(match.kind, "serial-pedometer")
        XCTAssertEqual(match.protocols, PedometerProtocols.names)
        XCTAssertEqual(match.defaultProtocol, HGPTextDecoder.name)
        var device = UdevDevice(syspath: "/sys/devices/pci0000:00/usb1/1-1/1-1:1.0/tty/ttyACM0", sysname: "ttyACM0", devnode: "/dev/ttyACM0")
        XCTAssertTrue(match.eligibility(of: device).reason.contains("70-healthgate-pedometer.rules"))
        device.properties["HEALTHGATE_ADAPTER"] = "serial-pedometer"
        XCTAssertTrue(match.eligibility(of: device).eligible)
    }

    func testTheSharedKeysComeFirstAndTheCountingKeysAreThePedometersOwn() {
        guard case .object(let object) = SerialPedometerConfiguration.configurationSchema else { return XCTFail("not an object") }
        XCTAssertEqual(object.properties.map(\.name), [
            "path", "rfcomm", "udev", "baudRate", "dataBits", "parity", "stopBits", "flowControl", "decoder", "maxLineLength",
            "exclusive", "reconnectIntervalSeconds", "deviceName", "identificationTimeoutSeconds", "gapThresholdSeconds",
            "wrapTolerance",
        ])
        XCTAssertEqual(object.property("decoder")?.defaultValue, .string("hgp1"))
        XCTAssertEqual(object.property("baudRate")?.defaultValue, .number(115_200))
        XCTAssertNil(object.property("path")?.defaultValue)
    }
}
