import Foundation
import HealthModel
import XCTest

/// A selection parsed once decides as `Device.matches` with the list, and a device's identities,
/// parsed once and shared by its copies, follow a change of its fields.
final class IdentitySelectionTests: XCTestCase {
    private static let devices = [
        Device(name: "Polar H10 1A2B3C4D", localIdentifier: "A0:9E:1A:12:34:56", radioIdentifier: "A0:9E:1A:12:34:56"),
        Device(name: "Polar H10 1A2B3C4D", localIdentifier: "polar/1A2B3C4D", radioIdentifier: "1A2B3C4D"),
        Device(name: "HRM 7", localIdentifier: "ant:120:7", radioIdentifier: "ant:120:7"),
        Device(name: "healthgate HRM 1", manufacturer: "healthgate", localIdentifier: "healthgate/SIM-HRM-0001"),
        Device(localIdentifier: "/dev/ttyUSB0"),
    ]
    private static let selections: [[String]?] = [
        nil, [], ["a0-9e-1a-12-34-56"], ["1a2b3c4d"], ["ANT:120:0007"], ["healthgate HRM 1"], ["healthgate/SIM-HRM-0001"],
        ["ant:120:8", "02:00:00:00:00:01"], ["Polar H10 1A2B3C4D [polar/1A2B3C4D]"], ["/dev/ttyUSB0", "ant:120:7"],
    ]

    func testASelectionDecidesAsTheListDoes() {
        var matched = 0
        for names in Self.selections {
            let selection = IdentitySelection(names)
            XCTAssertEqual(selection.names, names)
            XCTAssertEqual(selection.matches(nil), names == nil, "no device: only a nil selection")
            for device in Self.devices {
                let expected = names.map { list in list.contains { device.identities.contains(DeviceIdentity($0)) } } ?? true
                XCTAssertEqual(selection.matches(device), expected, "\(names ?? []) against \(device.displayName)")
                XCTAssertEqual(Device.matches(device, selection: names), expected)
                if expected { matched += 1 }
            }
        }
        // nil: 5; []: 0; the address: 1; the Polar id: 2 (both paths); the ANT+ id: 1; the name and the serial: 1 each;
        // another strap: 0; the display name: 1; the pty and the ANT+ id: 2.
        XCTAssertEqual(matched, 14)
    }

    func testIdentitiesAreParsedOnceForCopiesAndFollowAChangedField() {
        var strap = Device(name: "Polar H10 1A2B3C4D", localIdentifier: "polar/1A2B3C4D", radioIdentifier: "1A2B3C4D")
        let copy = strap
        XCTAssertEqual(copy.identities, strap.identities)
        XCTAssertEqual(strap.strapIdentity, DeviceIdentity("1a2b3c4d"))
        XCTAssertEqual(strap.pathIdentity, DeviceIdentity("1A2B3C4D"))
        // A setter makes new fields: the identities are parsed again from them, the copy keeps its own.
        strap.name = "HRM 9"
        strap.radioIdentifier = "ant:120:9"
        XCTAssertEqual(strap.strapIdentity, DeviceIdentity("ant:120:9"))
        XCTAssertEqual(strap.pathIdentity, DeviceIdentity("ant:120:9"))
        XCTAssertFalse(strap.identities.contains(DeviceIdentity("1A2B3C4D")))
        XCTAssertTrue(strap.identities.contains(DeviceIdentity("HRM 9")))
        XCTAssertEqual(copy.strapIdentity, DeviceIdentity("1A2B3C4D"))
        XCTAssertTrue(copy.identities.contains(DeviceIdentity("1A2B3C4D")))
        XCTAssertEqual(copy, Device(name: "Polar H10 1A2B3C4D", localIdentifier: "polar/1A2B3C4D", radioIdentifier: "1A2B3C4D"),
                       "the parsed identities are no part of equality")
    }
}
