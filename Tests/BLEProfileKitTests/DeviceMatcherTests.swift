import BLEProfileKit
import BLETransport
import GatewayRuntime
import XCTest

/// Device entries with pairing: `"pair": true` and `"passkey": N`, strictly decoded, and the
/// filter handing the matched entry's pairing to the session.
final class DeviceMatcherTests: XCTestCase {
    private func decode(_ value: JSONValue) throws -> DeviceSelection {
        try ConfigurationDecoder.decode(DeviceSelection.self, from: value)
    }

    func testPairingEntriesDecode() throws {
        let selection = try decode(.array([
            .object(["address": .string("c0:ff:ee:00:00:01"), "passkey": .number(24_680)]),
            .object(["name": .string("Meter *"), "pair": .bool(true)]),
            .string("C0:FF:EE:00:00:02"),
        ]))
        XCTAssertEqual(
            selection,
            .matching([
                .address("C0:FF:EE:00:00:01", pairing: DevicePairing(passkey: 24_680)),
                .name("Meter *", pairing: DevicePairing()),
                .address("C0:FF:EE:00:00:02"),
            ]))
        XCTAssertEqual(DevicePairing.format(24_680), "024680", "a passkey is shown with its leading zeros")
    }

    func testBadPairingEntriesAreRefusedWithTheReason() {
        let cases: [(JSONValue, String)] = [
            (.object(["address": .string("C0:FF:EE:00:00:01"), "passkey": .number(1_234_567)]), "six digits"),
            (.object(["address": .string("C0:FF:EE:00:00:01"), "passkey": .number(-1)]), "six digits"),
            (.object(["address": .string("C0:FF:EE:00:00:01"), "passkey": .number(12), "pair": .bool(false)]), "contradicts"),
            (.object(["address": .string("C0:FF:EE:00:00:01"), "passkee": .number(12)]), "passkey"),
        ]
        for (entry, reason) in cases {
            XCTAssertThrowsError(try decode(.array([entry]))) { error in
                XCTAssertTrue("\(error)".contains(reason), "\(entry): \(error)")
            }
        }
    }

    func testTheFilterGivesTheMatchedEntrysPairing() {
        let filter = DeviceFilter(
            services: [BluetoothUUID(0x1808)],
            selection: .matching([.name("Meter *", pairing: DevicePairing(passkey: 1)), .address("C0:FF:EE:00:00:02")]))
        let meter = DiscoveredPeripheral(address: "AA:00:00:00:00:01", name: "Meter 7", rssi: -50, serviceUUIDs: [BluetoothUUID(0x1808)])
        let other = DiscoveredPeripheral(address: "C0:FF:EE:00:00:02", name: nil, rssi: nil, serviceUUIDs: [])
        XCTAssertEqual(filter.matcher(for: meter)?.pairing, DevicePairing(passkey: 1))
        XCTAssertTrue(filter.matches(other))
        XCTAssertNil(filter.matcher(for: other)?.pairing)
    }
}
