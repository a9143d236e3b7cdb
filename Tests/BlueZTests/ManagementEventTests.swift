import BLETransport
@testable import BlueZ
import Foundation
import XCTest

/// The management socket's events and the advertising data they carry, decoded from byte vectors
/// in every truncation.
///
/// The event bytes follow BlueZ's doc/mgmt-api.txt ("Device Found Event", "Advertisement Monitor
/// Device Found Event"; header: code, controller index, length, little-endian). The advertising
/// data inside carries payloads the decoder tests cite: Polar's OH1 manufacturer data from
/// polar-ble-sdk (BleAdvertisementContent.swift: "6b 00 72 06 7f 44 37 00 00 00 33 00 3c") and
/// the Mi Scale service data of Home Assistant's xiaomi-ble tests (test_Xiaomi_Scale1:
/// 22 9e 43 e5 07 04 0b 10 13 01 after the UUID 181d).
final class ManagementEventTests: XCTestCase {
    /// Polar OH1's advertising data as a non-connectable strap sends it: flags (0x04, no BR/EDR,
    /// not discoverable), the manufacturer data, and its complete name.
    static let polarData: [UInt8] =
        [0x02, 0x01, 0x04]
        + [0x0E, 0xFF, 0x6B, 0x00, 0x72, 0x06, 0x7F, 0x44, 0x37, 0x00, 0x00, 0x00, 0x33, 0x00, 0x3C]
        + [0x13, 0x09] + Array("Polar OH1 1A2B3C4D".utf8)
    /// Mi Scale's service data (xiaomi-ble test_Xiaomi_Scale1) after its 16-bit UUID 0x181D.
    static let scaleData: [UInt8] = [0x0D, 0x16, 0x1D, 0x18, 0x22, 0x9E, 0x43, 0xE5, 0x07, 0x04, 0x0B, 0x10, 0x13, 0x01]

    /// A Device Found event (mgmt-api.txt): header, then Address (least significant byte first),
    /// Address_Type, RSSI, Flags, EIR_Data_Length, EIR_Data.
    static func deviceFound(
        controller: UInt16 = 0, address: [UInt8] = [0x56, 0x34, 0x12, 0x1A, 0x9E, 0xA0], type: UInt8 = 2, rssi: Int8 = -60,
        flags: UInt32 = 0x04, data: [UInt8]
    ) -> [UInt8] {
        let parameters = address + [type, UInt8(bitPattern: rssi)] + le32(flags) + le16(UInt16(data.count)) + data
        return le16(0x0012) + le16(controller) + le16(UInt16(parameters.count)) + parameters
    }

    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }

    func testDeviceFoundWithPolarManufacturerData() throws {
        let event = try ManagementEvent.decode(Self.deviceFound(data: Self.polarData))
        XCTAssertEqual(event.controller, 0)
        guard case .deviceFound(let found) = event.kind else { return XCTFail("not a Device Found: \(event)") }
        XCTAssertEqual(found.address, "A0:9E:1A:12:34:56")
        XCTAssertEqual(found.addressType, .leRandom)
        XCTAssertEqual(found.rssi, -60)
        XCTAssertEqual(found.flags, 0x04)
        let advertisement = try XCTUnwrap(
            ManagementAdvertisementReader.advertisement(event, controller: 0, at: Date(timeIntervalSince1970: 5), knownName: { _ in nil }))
        XCTAssertEqual(advertisement.name, "Polar OH1 1A2B3C4D")
        XCTAssertEqual(advertisement.manufacturerData, [0x006B: [0x72, 0x06, 0x7F, 0x44, 0x37, 0x00, 0x00, 0x00, 0x33, 0x00, 0x3C]])
        XCTAssertEqual(advertisement.serviceData, [:])
        XCTAssertEqual(advertisement.rssi, -60)
        XCTAssertEqual(advertisement.receivedAt, Date(timeIntervalSince1970: 5))
    }

    /// A scale's service data; the name comes from what BlueZ told when the report has none; an
    /// RSSI of 127 is none (mgmt-api.txt).
    func testDeviceFoundWithScaleServiceData() throws {
        let event = try ManagementEvent.decode(
            Self.deviceFound(address: [0x03, 0x02, 0x01, 0x8C, 0x47, 0xC8], type: 1, rssi: 127, data: Self.scaleData))
        let advertisement = try XCTUnwrap(
            ManagementAdvertisementReader.advertisement(event, controller: 0, at: Date(), knownName: { $0 == "C8:47:8C:01:02:03" ? "MIBFS" : nil }))
        XCTAssertEqual(advertisement.address, "C8:47:8C:01:02:03")
        XCTAssertNil(advertisement.rssi)
        XCTAssertEqual(advertisement.name, "MIBFS")
        XCTAssertEqual(advertisement.serviceData, [BluetoothUUID(0x181D): [0x22, 0x9E, 0x43, 0xE5, 0x07, 0x04, 0x0B, 0x10, 0x13, 0x01]])
    }

    /// Another controller's events and other events report nothing.
    func testOtherControllersAndEventsReportNothing() throws {
        let other = try ManagementEvent.decode(Self.deviceFound(controller: 1, data: Self.polarData))
        XCTAssertNil(try ManagementAdvertisementReader.advertisement(other, controller: 0, at: Date(), knownName: { _ in nil }))
        // mgmt-api.txt "Discovering Event" (0x0013): Address_Type 0x06, Discovering 1.
        let discovering = try ManagementEvent.decode([0x13, 0x00, 0x00, 0x00, 0x02, 0x00, 0x06, 0x01])
        XCTAssertEqual(discovering.kind, .other(code: 0x0013))
        XCTAssertNil(try ManagementAdvertisementReader.advertisement(discovering, controller: 0, at: Date(), knownName: { _ in nil }))
    }

    /// Advertisement Monitor Device Found (0x002F): the monitor handle before the same fields.
    func testAdvertisementMonitorDeviceFound() throws {
        let found = Array(Self.deviceFound(data: Self.polarData).dropFirst(6))
        let parameters = Self.le16(1) + found
        let event = try ManagementEvent.decode(Self.le16(0x002F) + Self.le16(0) + Self.le16(UInt16(parameters.count)) + parameters)
        guard case .monitorDeviceFound(let monitor, let report) = event.kind else { return XCTFail("\(event)") }
        XCTAssertEqual(monitor, 1)
        XCTAssertEqual(report.address, "A0:9E:1A:12:34:56")
        // Handle 1: an offloaded monitor's first match, which repeats a Device Found: not reported.
        XCTAssertNil(try ManagementAdvertisementReader.advertisement(event, controller: 0, at: Date(), knownName: { _ in nil }))
        // Handle 0: a report while the kernel scans passively for a monitor: reported.
        let passive = Self.le16(0) + found
        let passiveEvent = try ManagementEvent.decode(Self.le16(0x002F) + Self.le16(0) + Self.le16(UInt16(passive.count)) + passive)
        let advertisement = try ManagementAdvertisementReader.advertisement(passiveEvent, controller: 0, at: Date(), knownName: { _ in nil })
        XCTAssertEqual(advertisement?.manufacturerData[0x006B]?.count, 11)
    }

    /// Every prefix of an event is an error, never a crash: the header's length then disagrees.
    func testEveryTruncationOfAnEventIsAnError() {
        let bytes = Self.deviceFound(data: Self.polarData)
        for length in 0..<bytes.count {
            XCTAssertThrowsError(try ManagementEvent.decode(Array(bytes.prefix(length))), "prefix \(length)") { error in
                let code = (error as? ManagementEventError)?.code
                XCTAssertEqual(code, length < 6 ? .truncatedHeader : .lengthMismatch, "prefix \(length)")
            }
        }
    }

    /// A Device Found whose own fields are cut, with a header that agrees: every cut an error.
    func testEveryTruncationOfDeviceFoundParametersIsAnError() {
        let parameters = Array(Self.deviceFound(data: Self.polarData).dropFirst(6))
        for length in 0..<parameters.count {
            let cut = Array(parameters.prefix(length))
            let bytes = Self.le16(0x0012) + Self.le16(0) + Self.le16(UInt16(cut.count)) + cut
            XCTAssertThrowsError(try ManagementEvent.decode(bytes), "parameters cut to \(length)") { error in
                XCTAssertEqual((error as? ManagementEventError)?.code, .truncatedEvent)
            }
        }
    }

    /// Advertising data cut inside a structure is an error; cut between structures it is whole.
    func testEveryTruncationOfAdvertisingData() throws {
        let data = Self.polarData + Self.scaleData
        let boundaries: Set<Int> = [0, 3, 18, 38, 52]
        for length in 0...data.count {
            let prefix = Array(data.prefix(length))
            if boundaries.contains(length) {
                XCTAssertNoThrow(try AdvertisingDataFields.parse(prefix), "prefix \(length)")
            } else {
                XCTAssertThrowsError(try AdvertisingDataFields.parse(prefix), "prefix \(length)") { error in
                    XCTAssertEqual((error as? ManagementEventError)?.code, .truncatedStructure)
                }
            }
        }
        let whole = try AdvertisingDataFields.parse(data)
        XCTAssertEqual(whole.manufacturerData.keys.sorted(), [0x006B])
        XCTAssertEqual(whole.serviceData.keys.map(\.description), ["181d"])
    }

    /// Structures too short for their identifier are errors; a zero length ends the data; a
    /// shortened name serves when no complete one came; 32- and 128-bit service data UUIDs.
    func testAdvertisingDataEdges() throws {
        for short in [[0x02, 0xFF, 0x6B], [0x02, 0x16, 0x1D], [0x04, 0x20, 0x01, 0x02, 0x03]] as [[UInt8]] {
            XCTAssertThrowsError(try AdvertisingDataFields.parse(short), "\(short)")
        }
        let padded = try AdvertisingDataFields.parse([0x03, 0x08, 0x48, 0x31, 0x00, 0xFF, 0xFF])
        XCTAssertEqual(padded.name, "H1")
        let uuid32 = try AdvertisingDataFields.parse([0x06, 0x20, 0x78, 0x56, 0x34, 0x12, 0xAA])
        XCTAssertEqual(uuid32.serviceData, [BluetoothUUID(string: "12345678-0000-1000-8000-00805f9b34fb")!: [0xAA]])
        let uuid128 = try AdvertisingDataFields.parse([0x12, 0x21] + (0..<16).map { UInt8($0) } + [0xBB])
        XCTAssertEqual(uuid128.serviceData, [BluetoothUUID(string: "0f0e0d0c-0b0a-0908-0706-050403020100")!: [0xBB]])
    }

    /// The commands' bytes (mgmt-api.txt: Add Advertisement Patterns Monitor, 34 bytes per
    /// pattern with a 31-octet value; Remove Advertisement Monitor), and patterns it refuses.
    func testMonitorCommands() throws {
        let command = try XCTUnwrap(
            ManagementCommand.addMonitor(
                controller: 1,
                patterns: [AdvertisingDataPattern(type: 0xFF, content: [0x6B, 0x00]), AdvertisingDataPattern(type: 0x16, content: [0x1D, 0x18])]))
        XCTAssertEqual(Array(command.prefix(7)), [0x52, 0x00, 0x01, 0x00, 0x45, 0x00, 0x02])
        XCTAssertEqual(command.count, 6 + 1 + 2 * 34)
        XCTAssertEqual(Array(command[7..<12]), [0xFF, 0x00, 0x02, 0x6B, 0x00])
        XCTAssertEqual(Array(command[41..<46]), [0x16, 0x00, 0x02, 0x1D, 0x18])
        XCTAssertNil(ManagementCommand.addMonitor(controller: 0, patterns: []))
        XCTAssertNil(ManagementCommand.addMonitor(controller: 0, patterns: [AdvertisingDataPattern(start: 30, type: 0xFF, content: [1, 2])]))
        XCTAssertEqual(ManagementCommand.removeMonitor(controller: 0, handle: 0x0102), [0x53, 0x00, 0x00, 0x00, 0x02, 0x00, 0x02, 0x01])
        // Command Complete and Command Status decode, and are no advertisement.
        let complete = try ManagementEvent.decode([0x01, 0x00, 0x00, 0x00, 0x05, 0x00, 0x52, 0x00, 0x00, 0x07, 0x00])
        XCTAssertEqual(complete.kind, .commandComplete(opcode: 0x52, status: 0, parameters: [0x07, 0x00]))
        let status = try ManagementEvent.decode([0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x52, 0x00, 0x0D])
        XCTAssertEqual(status.kind, .commandStatus(opcode: 0x52, status: 0x0D))
        XCTAssertThrowsError(try ManagementEvent.decode([0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x52, 0x00]))
    }

    func testControllerIndexOfAnAdapterPath() {
        XCTAssertEqual(ManagementAdvertisementReader.controllerIndex(adapterPath: "/org/bluez/hci0"), 0)
        XCTAssertEqual(ManagementAdvertisementReader.controllerIndex(adapterPath: "/org/bluez/hci12"), 12)
        XCTAssertNil(ManagementAdvertisementReader.controllerIndex(adapterPath: "/org/bluez/usb0"))
    }
}
