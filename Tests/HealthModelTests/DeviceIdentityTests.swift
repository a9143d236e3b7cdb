import HealthModel
import XCTest

/// A strap's identity compares equal however it was written: Bluetooth addresses in any case and
/// separator form, ANT+ ids with or without leading zeros; other identities exactly.
final class DeviceIdentityTests: XCTestCase {
    func testBluetoothAddressesInEveryFormAreOneIdentity() {
        let forms = ["02:00:00:00:00:0a", "02-00-00-00-00-0A", "02000000000A", "02000000000a", "02:00:00:00:00:0A"]
        XCTAssertEqual(Set(forms.map { DeviceIdentity($0).canonical }), ["02:00:00:00:00:0A"])
        XCTAssertEqual(DeviceIdentity("02:00-00:00:00:0a").canonical, "02:00:00:00:00:0A", "mixed separators still name it")
        XCTAssertEqual(DeviceIdentity("02:00:00:00:00:0a"), DeviceIdentity("02-00-00-00-00-0A"))
        XCTAssertNotEqual(DeviceIdentity("02:00:00:00:00:0a"), DeviceIdentity("02:00:00:00:00:0b"))
    }

    func testAntIdentitiesAndOtherTexts() {
        XCTAssertEqual(DeviceIdentity("ANT:120:012345").canonical, "ant:120:12345")
        XCTAssertEqual(DeviceIdentity("ant:120:12345"), DeviceIdentity("Ant:0120:012345"))
        XCTAssertEqual(DeviceIdentity("ant:120:2000000").canonical, "ant:120:2000000", "more than 20 bits: not an ANT+ id, kept as written")
        XCTAssertEqual(DeviceIdentity("Polar/1A2B3C4D").canonical, "Polar/1A2B3C4D")
        XCTAssertNotEqual(DeviceIdentity("polar/1a2b3c4d"), DeviceIdentity("Polar/1A2B3C4D"), "a serial is compared exactly")
        XCTAssertEqual(DeviceIdentity("02:00:00:00:00").canonical, "02:00:00:00:00", "five octets: not an address")
        XCTAssertEqual(DeviceIdentity("02:000:00:00:00:0").canonical, "02:000:00:00:00:0", "octets of two digits only")
    }

    func testASelectionMatchesADeviceWhateverFormItGivesTheAddress() {
        let strap = Device(name: "Polar H10", localIdentifier: "A0:9E:1A:12:34:56")
        XCTAssertTrue(Device.matches(strap, selection: ["a0-9e-1a-12-34-56"]))
        XCTAssertTrue(Device.matches(strap, selection: ["a09e1a123456"]))
        XCTAssertFalse(Device.matches(strap, selection: ["a0-9e-1a-12-34-57"]))
        XCTAssertTrue(Device.matches(strap, selection: ["Polar H10"]))
    }
}
