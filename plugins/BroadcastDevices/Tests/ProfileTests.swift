import BLEAdvertisementKit
import BLETransport
import BroadcastDevices
import Foundation
import HealthModel
import XCTest

/// The profiles' matching and identities.
final class ProfileTests: XCTestCase {
    let date = Date(timeIntervalSince1970: 1_800_000_000)

    func testPolarIdentityFromTheName() {
        // Names as Polar's SDK tests parse them (BleAdvertisementContentTest: "Polar GritX Pro AA123459").
        let h10 = Advertisement(address: "a0:9e:1a:12:34:56", name: "Polar H10 1A2B3C4D", receivedAt: date)
        let strap = PolarBroadcastProfile.identity(of: h10)
        XCTAssertEqual(strap.canonical, "1A2B3C4D")
        XCTAssertEqual(strap, DeviceIdentity("1a2b3c4d"), "the id a participant's devices name it by")
        XCTAssertEqual(h10.naming(strap), "1A2B3C4D (A0:9E:1A:12:34:56)")
        XCTAssertEqual(PolarBroadcastProfile.model(inName: "Polar H10 1A2B3C4D"), "H10")
        let watch = Advertisement(address: "a0:9e:1a:00:00:01", name: "Polar GritX Pro AA123459", receivedAt: date)
        XCTAssertEqual(PolarBroadcastProfile.model(inName: "Polar GritX Pro AA123459"), "GritX Pro")
        XCTAssertEqual(PolarBroadcastProfile.identity(of: watch).canonical, "AA123459")
        for name in [nil, "Polar H10", "Garmin HRM 1A2B3C4D", "Polar H10 NOTHEX00"] {
            let other = Advertisement(address: "a0:9e:1a:00:00:02", name: name, receivedAt: date)
            let identity = PolarBroadcastProfile.identity(of: other)
            XCTAssertEqual(identity.canonical, "A0:9E:1A:00:00:02", name ?? "no name")
            XCTAssertEqual(other.naming(identity), "A0:9E:1A:00:00:02", "the address alone: \(name ?? "no name")")
            XCTAssertNil(name.flatMap(PolarBroadcastProfile.model(inName:)), name ?? "no name")
        }
    }

    func testMatching() throws {
        let polar = Advertisement(address: "a0:9e:1a:12:34:56", manufacturerData: [0x006B: [0x2B, 0x0B, 0xB6, 0xAC]], receivedAt: date)
        XCTAssertTrue(PolarBroadcastProfile.matches(polar))
        XCTAssertFalse(MiScaleProfile.matches(polar))
        XCTAssertEqual(try PolarBroadcastProfile.decode(polar)?.slowAverageHeartRate, 172)
        let scale = Advertisement(
            address: "c8:47:8c:00:00:01",
            serviceData: [BluetoothUUID(0x181D): [0x22, 0x9E, 0x43, 0xE5, 0x07, 0x04, 0x0B, 0x10, 0x13, 0x01]], receivedAt: date)
        XCTAssertTrue(MiScaleProfile.matches(scale))
        XCTAssertFalse(PolarBroadcastProfile.matches(scale))
        XCTAssertEqual(try MiScaleProfile.decode(scale)?.weightKilograms, 86.55)
        XCTAssertEqual(MiScaleProfile.identity(of: scale).canonical, "C8:47:8C:00:00:01")
        XCTAssertNil(MiScaleProfile.requiredRate)
        XCTAssertEqual(PolarBroadcastProfile.requiredRate, 1)
    }

    /// The simulators send payloads the decoders read back.
    func testSimulatorsDecode() throws {
        for tick in 0..<120 {
            let strap = PolarBroadcastProfile.simulated(device: 2, tick: tick, at: date)
            XCTAssertNotNil(try PolarBroadcastProfile.decode(strap))
            XCTAssertEqual(PolarBroadcastProfile.identity(of: strap).canonical, "00000002")
            let scale = MiScaleProfile.simulated(device: 1, tick: tick, at: date)
            XCTAssertNotNil(try MiScaleProfile.decode(scale))
        }
    }
}
