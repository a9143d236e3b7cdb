import Foundation
import HealthModel
import XCTest

/// A device's copies share one fields object: identity recognizes a copy, a setter never changes
/// another copy, and equality, hashing and JSON are the field-by-field ones.
final class DeviceTests: XCTestCase {
    let strap = Device(
        name: "Polar H10 1A2B3C4D", manufacturer: "Polar Electro Oy", model: "H10", firmwareVersion: "3.1.1",
        localIdentifier: "A0:9E:1A:12:34:56")

    func testACopyIsIdenticalAndAnEqualValueBuiltApartIsNot() {
        let copy = strap
        XCTAssertTrue(copy.isIdentical(to: strap))
        let rebuilt = Device(
            name: "Polar H10 1A2B3C4D", manufacturer: "Polar Electro Oy", model: "H10", firmwareVersion: "3.1.1",
            localIdentifier: "A0:9E:1A:12:34:56")
        XCTAssertFalse(rebuilt.isIdentical(to: strap), "identity is not equality")
        XCTAssertEqual(rebuilt, strap)
        XCTAssertEqual(rebuilt.hashValue, strap.hashValue)
        XCTAssertTrue(Device?.none.isIdentical(to: nil))
        XCTAssertFalse(Device?.some(strap).isIdentical(to: nil))
        XCTAssertTrue(Device?.some(strap).isIdentical(to: copy))
    }

    func testSettingAFieldChangesOnlyThatCopy() {
        var updated = strap
        updated.firmwareVersion = "3.1.2"
        XCTAssertFalse(updated.isIdentical(to: strap))
        XCTAssertNotEqual(updated, strap)
        XCTAssertEqual(strap.firmwareVersion, "3.1.1")
        XCTAssertEqual(updated.firmwareVersion, "3.1.2")
        XCTAssertEqual(updated.name, strap.name)
        XCTAssertEqual(updated.localIdentifier, strap.localIdentifier)
        var every = Device()
        every.name = "n"; every.manufacturer = "m"; every.model = "o"; every.hardwareVersion = "h"
        every.firmwareVersion = "f"; every.softwareVersion = "s"; every.localIdentifier = "l"; every.udiDeviceIdentifier = "u"
        XCTAssertEqual(every, Device(
            name: "n", manufacturer: "m", model: "o", hardwareVersion: "h", firmwareVersion: "f", softwareVersion: "s",
            localIdentifier: "l", udiDeviceIdentifier: "u"))
        XCTAssertEqual(Set([strap, updated, strap]).count, 2)
    }

    func testJSONHasOnlyThePresentFieldsAndDecodesBack() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(strap), as: UTF8.self)
        XCTAssertEqual(json, #"{"firmwareVersion":"3.1.1","localIdentifier":"A0:9E:1A:12:34:56","manufacturer":"Polar Electro Oy","model":"H10","name":"Polar H10 1A2B3C4D"}"#)
        XCTAssertEqual(try JSONDecoder().decode(Device.self, from: Data(json.utf8)), strap)
        XCTAssertEqual(try JSONDecoder().decode(Device.self, from: Data("{}".utf8)), Device())
        XCTAssertThrowsError(try JSONDecoder().decode(Device.self, from: Data(#"{"name":7}"#.utf8)))
    }
}
