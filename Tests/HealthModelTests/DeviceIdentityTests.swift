import Foundation
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

/// A strap that reports a serial number still carries its radio: a selection naming the address,
/// the Polar device id or the ANT+ id matches it, and its strap and path identities say which
/// strap it is and which way it came.
final class RadioIdentityTests: XCTestCase {
    func testPolarDeviceIDsInNamesAndInEveryCase() {
        XCTAssertEqual(DeviceIdentity("1a2b3c4d").canonical, "1A2B3C4D")
        XCTAssertEqual(DeviceIdentity.polarDeviceID(inName: "Polar H10 1a2b3c4d"), DeviceIdentity("1A2B3C4D"))
        XCTAssertEqual(DeviceIdentity.polarDeviceID(inName: "Polar Verity Sense 0A0B0C0D"), DeviceIdentity("0A0B0C0D"))
        XCTAssertNil(DeviceIdentity.polarDeviceID(inName: "Polar 1A2B3C4D"), "two words: no model, not Polar's form")
        XCTAssertNil(DeviceIdentity.polarDeviceID(inName: "Wahoo TICKR 1A2B3C4D"))
        XCTAssertNil(DeviceIdentity.polarDeviceID(inName: "Polar H10 1A2B3C4"))
    }

    func testASerialNumberedStrapMatchesItsAddress() {
        let strap = Device(
            name: "healthgate HRM 1", manufacturer: "healthgate", localIdentifier: "healthgate/SIM-HRM-0001",
            radioIdentifier: "02:00:00:00:00:01")
        XCTAssertTrue(Device.matches(strap, selection: ["02:00:00:00:00:01"]))
        XCTAssertTrue(Device.matches(strap, selection: ["020000000001"]))
        XCTAssertTrue(Device.matches(strap, selection: ["healthgate/SIM-HRM-0001"]))
        XCTAssertFalse(Device.matches(strap, selection: ["02:00:00:00:00:02"]))
        XCTAssertEqual(strap.pathIdentity, DeviceIdentity("02:00:00:00:00:01"))
        XCTAssertEqual(strap.strapIdentity, DeviceIdentity("02:00:00:00:00:01"))
    }

    func testBothPathsOfAPolarStrapAreOneStrapAndTwoPaths() {
        let connected = Device(
            name: "Polar H10 1A2B3C4D", manufacturer: "Polar Electro Oy", localIdentifier: "Polar Electro Oy/C7A1",
            radioIdentifier: "A0:9E:1A:12:34:56")
        let broadcast = Device(name: "Polar H10 1A2B3C4D", localIdentifier: "1A2B3C4D", radioIdentifier: "1A2B3C4D")
        XCTAssertEqual(connected.strapIdentity, broadcast.strapIdentity)
        XCTAssertNotEqual(connected.pathIdentity, broadcast.pathIdentity)
        for device in [connected, broadcast] {
            XCTAssertTrue(Device.matches(device, selection: ["1a2b3c4d"]), "the Polar id names both paths")
        }
        XCTAssertTrue(Device.matches(connected, selection: ["a0:9e:1a:12:34:56"]))
        XCTAssertFalse(Device.matches(broadcast, selection: ["a0:9e:1a:12:34:56"]), "a broadcast has no connection address")

        let ant = Device(name: "ANT+ heart-rate strap 4660", localIdentifier: "ant:120:4660", radioIdentifier: "ant:120:4660")
        XCTAssertTrue(Device.matches(ant, selection: ["ANT:120:04660"]))
        XCTAssertEqual(ant.pathIdentity, DeviceIdentity("ant:120:4660"))
    }

    func testTheRadioIdentifierSurvivesCodingAndIsPartOfEquality() throws {
        let strap = Device(name: "x", localIdentifier: "m/s", radioIdentifier: "02:00:00:00:00:01")
        let decoded = try JSONDecoder().decode(Device.self, from: JSONEncoder().encode(strap))
        XCTAssertEqual(decoded, strap)
        XCTAssertEqual(decoded.radioIdentifier, "02:00:00:00:00:01")
        XCTAssertNotEqual(strap, Device(name: "x", localIdentifier: "m/s"))
        var changed = strap
        changed.radioIdentifier = "02:00:00:00:00:02"
        XCTAssertEqual(strap.radioIdentifier, "02:00:00:00:00:01", "copy on write")
        XCTAssertNotEqual(changed, strap)
    }
}
