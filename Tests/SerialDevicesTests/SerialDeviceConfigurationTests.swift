import GatewayRuntime
import LinuxSystem
import SerialDevices
import XCTest

/// A member's configuration with only the shared keys and one of its own.
struct ProbeConfiguration: SerialDeviceConfiguration, Hashable {
    var connection = SerialConnectionConfiguration(decoder: "probe1")
    var own = 7

    init() {}

    static var configurationKeys: [ConfigurationKey<Self>] {
        serialDeviceKeys(protocols: ["probe1", "probe2"]) + [ConfigurationKey("own", \Self.own, .whole(1...9, unit: "things"), "A key of the member's")]
    }

    func validated() throws(PluginConfigurationError) -> SerialConnectionSettings {
        try connection.validated(protocols: ["probe1", "probe2"])
    }
}

/// The shared keys, declared once in SerialDevices: decoding, defaults, schema and checks.
final class SerialDeviceConfigurationTests: XCTestCase {
    func testDefaultsAndDecodingOfTheSharedKeysBesideTheMembersOwn() throws {
        let decoded = try JSONValue.object(["udev": .bool(true), "own": .number(3), "parity": .string("even")])
            .decodeStrictly(ProbeConfiguration.self)
        XCTAssertEqual(decoded.own, 3)
        let settings = try decoded.validated()
        XCTAssertEqual(settings.endpoint, .udev)
        XCTAssertEqual(settings.serial, SerialConfiguration(baudRate: 115_200, dataBits: 8, parity: .even, stopBits: 1, flowControl: .none))
        XCTAssertEqual(settings.protocolName, "probe1")
        XCTAssertEqual(settings.maximumLineLength, 256)
        XCTAssertTrue(settings.exclusive)
        XCTAssertEqual(settings.reconnectInterval, .seconds(2))
        XCTAssertNil(settings.deviceName)

        let rfcomm = try JSONValue.object(["rfcomm": .object(["address": .string("00:1A:7D:DA:71:13"), "channel": .number(4)])])
            .decodeStrictly(ProbeConfiguration.self).validated()
        XCTAssertEqual(rfcomm.endpoint, .rfcomm(try XCTUnwrap(BluetoothAddress("00:1A:7D:DA:71:13")), channel: 4))
    }

    func testTheSchemaHasEverySharedKeyWithItsDefault() {
        guard case .object(let object) = ProbeConfiguration.configurationSchema else { return XCTFail("not an object") }
        XCTAssertEqual(object.properties.map(\.name), [
            "path", "rfcomm", "udev", "baudRate", "dataBits", "parity", "stopBits", "flowControl", "decoder", "maxLineLength",
            "exclusive", "reconnectIntervalSeconds", "deviceName", "own",
        ])
        XCTAssertEqual(object.property("decoder")?.defaultValue, .string("probe1"))
        XCTAssertEqual(object.property("parity")?.defaultValue, .string("none"))
        XCTAssertEqual(object.property("exclusive")?.defaultValue, .bool(true))
        XCTAssertNil(object.property("rfcomm")?.defaultValue)
        guard case .object(let rfcomm)? = object.property("rfcomm")?.schema else { return XCTFail("rfcomm is no block") }
        XCTAssertEqual(rfcomm.required, ["address", "channel"])
    }

    func testBadSharedKeysNameTheKey() throws {
        let cases: [([String: JSONValue], String, String)] = [
            ([:], "path", "exactly one"),
            (["path": .string("/dev/x"), "udev": .bool(true)], "path", "exactly one"),
            (["path": .string("ttyUSB0")], "path", "absolute"),
            (["rfcomm": .object(["address": .string("nope"), "channel": .number(1)])], "rfcomm.address", "Bluetooth address"),
            (["rfcomm": .object(["address": .string("00:11:22:33:44:55"), "channel": .number(31)])], "rfcomm.channel", "allowed 1…30"),
            (["udev": .bool(true), "baudRate": .number(1234)], "baudRate", "termios"),
            (["udev": .bool(true), "dataBits": .number(9)], "dataBits", "allowed 5…8"),
            (["udev": .bool(true), "stopBits": .number(3)], "stopBits", "allowed 1…2"),
            (["udev": .bool(true), "decoder": .string("nmea")], "decoder", "unknown decoder \"nmea\"; known: probe1, probe2"),
            (["udev": .bool(true), "maxLineLength": .number(5)], "maxLineLength", "allowed 16…4096 bytes"),
            (["udev": .bool(true), "reconnectIntervalSeconds": .number(0)], "reconnectIntervalSeconds", "out of range"),
            (["udev": .bool(true), "deviceName": .string("")], "deviceName", "must not be empty"),
        ]
        for (config, keyPath, fragment) in cases {
            XCTAssertThrowsError(try JSONValue.object(config).decodeStrictly(ProbeConfiguration.self).validated()) { error in
                let error = error as? PluginConfigurationError
                XCTAssertEqual(error?.keyPath, keyPath, "\(config)")
                XCTAssertTrue(error?.reason.contains(fragment) ?? false, "\(String(describing: error))")
            }
        }
        XCTAssertThrowsError(try JSONValue.object(["udev": .bool(true), "parity": .string("mark")]).decodeStrictly(ProbeConfiguration.self))
        XCTAssertThrowsError(try JSONValue.object(["udev": .bool(true), "baud": .number(9600)]).decodeStrictly(ProbeConfiguration.self))
    }
}
