import BLEProfileKit
import BLETransport
import Foundation
import GatewayRuntime
import SampleBus
import XCTest

/// The configuration's `bluetooth` section is the Bluetooth family's: decoded strictly,
/// range-checked, and declared in the file's schema, with errors naming `bluetooth.KEY`.
final class BluetoothConfigurationTests: XCTestCase {
    private func decode(_ json: String) throws -> BluetoothConfiguration {
        let configuration = try GatewayConfiguration.parse(Data(json.utf8), origin: "bt.json")
        return try BluetoothConfiguration.decode(configuration.bluetooth, origin: configuration.origin)
    }

    private func decodeError(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> ConfigurationError? {
        do {
            _ = try decode(json)
            XCTFail("decoded: \(json)", file: file, line: line)
            return nil
        } catch let error as ConfigurationError {
            XCTAssertEqual(error.file, "bt.json", file: file, line: line)
            return error
        } catch {
            XCTFail("\(error)", file: file, line: line)
            return nil
        }
    }

    func testAdapterLimitsAreTheGatewaysAndChecked() throws {
        XCTAssertEqual(
            try decode(#"{"bluetooth": {"adapterLimits": {"connections": 7, "silentSeconds": 120}}}"#).adapterLimits,
            AdapterScheduler.Limits(connections: 7, silentSeconds: 120))
        XCTAssertEqual(try decode("{}"), BluetoothConfiguration())
        XCTAssertEqual(decodeError(#"{"bluetooth": {"adapterLimits": {"connections": 0}}}"#)?.keyPath, "bluetooth.adapterLimits.connections")
        XCTAssertEqual(decodeError(#"{"bluetooth": {"adapterLimit": {}}}"#)?.keyPath, "bluetooth.adapterLimit")
    }

    /// `bluetooth.adapters`: a list of adapter names, or "all"; anything else is refused with
    /// the key path.
    func testTheGatewaysAdaptersAreAListOrAll() throws {
        XCTAssertEqual(try decode(#"{"bluetooth": {"adapters": "all"}}"#).adapters, .all)
        XCTAssertEqual(try decode(#"{"bluetooth": {"adapters": ["hci0", "hci1"]}}"#).adapters, .named(["hci0", "hci1"]))
        XCTAssertNil(try decode("{}").adapters)
        XCTAssertEqual(decodeError(#"{"bluetooth": {"adapters": "some"}}"#)?.keyPath, "bluetooth.adapters")
        XCTAssertEqual(decodeError(#"{"bluetooth": {"adapters": []}}"#)?.keyPath, "bluetooth.adapters")
    }

    /// A source's `adapters` takes "all" too, with the bluez transport only, and never with
    /// `adapter`.
    func testASourcesAdaptersMayBeAll() throws {
        XCTAssertNoThrow(try BLESourceKeys.validate(adapter: nil, adapters: .all, simulated: false))
        XCTAssertThrowsError(try BLESourceKeys.validate(adapter: "hci0", adapters: .all, simulated: false))
        XCTAssertThrowsError(try BLESourceKeys.validate(adapter: nil, adapters: .all, simulated: true))
        XCTAssertEqual(BLESourceKeys.adapterSelection(adapter: "hci1", adapters: nil), .named(["hci1"]))
        XCTAssertNil(BLESourceKeys.adapterSelection(adapter: nil, adapters: nil))
        let shared = try ConfigurationDecoder.decode(BluetoothSharedConfiguration.self, from: .object(["adapters": .string("all")]))
        XCTAssertEqual(shared.adapters, .all)
    }

    /// The adapters a source uses: its own, else the gateway's, else the first; "all" is what
    /// the stack lists, and the first adapter when it lists none or cannot be reached.
    func testAllIsResolvedFromTheStacksAdapters() async {
        let clock = SystemClock()
        let listed = BluetoothAdapters(clock: clock, adapters: .all, listAdapters: { ["hci0", "hci1", "hci2"] })
        let resolvedDefault = await listed.resolve(nil)
        XCTAssertEqual(resolvedDefault, ["hci0", "hci1", "hci2"])
        let resolvedOwn = await listed.resolve(["hci1"])
        XCTAssertEqual(resolvedOwn, ["hci1"])
        let none = BluetoothAdapters(clock: clock, listAdapters: { [] })
        let resolvedNone = await none.resolve(.all)
        XCTAssertEqual(resolvedNone, [nil])
        let unreachable = BluetoothAdapters(
            clock: clock, adapters: .all, listAdapters: { throw BLETransportError(.unavailable, "no bus") })
        let resolvedUnreachable = await unreachable.resolve(nil)
        XCTAssertEqual(resolvedUnreachable, [nil])
        let resolvedFirst = await BluetoothAdapters(clock: clock).resolve(nil)
        XCTAssertEqual(resolvedFirst, [nil])
    }

    /// The file's schema refuses a number outside its range with the key path, the value, the
    /// range and the unit, as it does the gateway's own keys.
    func testTheSchemaRefusesLimitsOutOfRange() {
        let schema = GatewayConfiguration.schema(
            catalog: PluginCatalog([]),
            sections: GatewayConfiguration.OwnedSections(
                store: .object([]), web: .object([]), profile: .object([]), participants: .array(.text),
                bluetooth: BluetoothConfiguration.configurationSchema))
        XCTAssertThrowsError(
            try GatewayConfiguration.parse(
                Data(#"{"bluetooth": {"adapterLimits": {"connections": 21}}}"#.utf8), origin: "/etc/hg.json", schema: schema)
        ) { error in
            let error = error as? ConfigurationError
            XCTAssertEqual(error?.keyPath, "bluetooth.adapterLimits.connections")
            XCTAssertEqual(error?.reason, "21 is above the largest accepted value 20 (links)")
        }
    }
}
