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
