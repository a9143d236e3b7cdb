import ANTProtocol
import XCTest

/// Every heart-rate page with its fields, the toggle rule, the 20-bit device number and the
/// manufacturer table.
final class ANTHeartRatePageTests: XCTestCase {
    func testTheCommonBytesOfEveryPage() throws {
        // Beat time 0xB13C = 45372/1024 s, count 79, 72 bpm; toggle set, page 4.
        let page = try ANTHeartRatePage(bytes: [0x84, 0x12, 0x9E, 0x5A, 0x3C, 0xB1, 0x4F, 0x48])
        XCTAssertTrue(page.toggle)
        XCTAssertEqual(page.pageNumber, 4)
        XCTAssertEqual(page.beatTime, 0xB13C)
        XCTAssertEqual(page.beatCount, 79)
        XCTAssertEqual(page.heartRate, 72)
        XCTAssertEqual(page.content, .previousBeat(manufacturerSpecific: 0x12, previousBeatTime: 0x5A9E))
        XCTAssertEqual(page.previousBeatTime, 0x5A9E)
        XCTAssertEqual(page.bytes, [0x84, 0x12, 0x9E, 0x5A, 0x3C, 0xB1, 0x4F, 0x48])
        XCTAssertNil(try ANTHeartRatePage(bytes: [0, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]).heartRate, "0 bpm is invalid")
    }

    func testEachPagesOwnFields() throws {
        let rows: [([UInt8], ANTHeartRatePage.Content)] = [
            ([0x00, 0xFF, 0xFF, 0xFF], .defaultData),
            // 0x012345 units of 2 s.
            ([0x81, 0x45, 0x23, 0x01], .operatingTime(seconds: 0x012345 * 2)),
            // Garmin (1), serial upper bits 0xD2CC.
            ([0x02, 0x01, 0xCC, 0xD2], .manufacturer(id: 1, serialNumber: 0xD2CC)),
            ([0x83, 0x05, 0x0B, 0x0D], .product(hardwareVersion: 5, softwareVersion: 11, modelNumber: 13)),
            ([0x05, 0x60, 0x9A, 0x70], .swimInterval(intervalAverage: 0x60, intervalMaximum: 0x9A, sessionAverage: 0x70)),
            ([0x86, 0xFF, 0x07, 0x01], .capabilities(featuresSupported: 7, featuresEnabled: 1)),
            // 87 %, 2 + 0xC0/256 V, status good (2).
            ([0x07, 0x57, 0xC0, 0x22], .battery(ANTBatteryStatus(level: 87, fractionalVoltage: 0xC0, coarseVoltage: 2, status: .good))),
            ([0x0C, 0x01, 0x02, 0x03], .unknown(bytes: [1, 2, 3])),
        ]
        for (head, content) in rows {
            let bytes = head + [0x10, 0x04, 0xA4, 0x3C]
            let page = try ANTHeartRatePage(bytes: bytes)
            XCTAssertEqual(page.content, content, "page \(head[0] & 0x7F)")
            XCTAssertEqual(page.pageNumber, head[0] & 0x7F)
            XCTAssertEqual(page.beatTime, 0x0410)
            XCTAssertEqual(page.beatCount, 0xA4)
            XCTAssertEqual(page.heartRate, 60)
            XCTAssertEqual(page.bytes, bytes, "page \(head[0] & 0x7F) encodes back")
        }
        let battery = ANTBatteryStatus(level: 87, fractionalVoltage: 0xC0, coarseVoltage: 2, status: .good)
        XCTAssertEqual(battery.voltage ?? 0, 2.75, accuracy: 1e-9)
        XCTAssertEqual(battery.status.name, "good")
        let unknown = try ANTHeartRatePage(bytes: [0x07, 0xFF, 0x00, 0x7F, 0, 0, 0, 60])
        guard case .battery(let absent) = unknown.content else { return XCTFail("page 7") }
        XCTAssertNil(absent.level)
        XCTAssertNil(absent.voltage)
        XCTAssertEqual(absent.status, .invalid)
    }

    func testUntrustedPagesReadOnlyTheCommonBytes() throws {
        let page = try ANTHeartRatePage(bytes: [0x04, 0x12, 0x9E, 0x5A, 0x3C, 0xB1, 0x4F, 0x48], pageSpecificTrusted: false)
        XCTAssertEqual(page.content, .legacy)
        XCTAssertNil(page.previousBeatTime)
        XCTAssertEqual(page.heartRate, 72)
        XCTAssertEqual(page.beatCount, 79)
    }

    func testAPageMustBeEightBytes() {
        for count in [0, 7, 9] {
            XCTAssertThrowsError(try ANTHeartRatePage(bytes: Array(repeating: 0, count: count))) { error in
                XCTAssertEqual(error as? ANTDecodingError, ANTDecodingError(what: "heart-rate page", expected: 8, actual: count))
            }
        }
    }

    func testTheToggleRule() {
        var tracker = ANTPageToggleTracker()
        // Four messages per toggle state; nothing trusted before the first change.
        let trusted = (0..<12).map { tracker.observe(toggle: ($0 / 4) % 2 == 1) }
        XCTAssertEqual(trusted, [false, false, false, false] + Array(repeating: true, count: 8))
        // A strap that stops toggling (the last four were off; it turns on and stays on):
        // trusted for the run that could still be normal, then not.
        var stopped = (0..<12).map { _ in tracker.observe(toggle: true) }
        XCTAssertEqual(stopped, Array(repeating: true, count: ANTPageToggleTracker.maximumRun) + Array(repeating: false, count: 4))
        XCTAssertFalse(tracker.isTrusted)
        XCTAssertTrue(tracker.observe(toggle: false), "it toggles again")
        // A legacy strap never toggles: never trusted.
        var legacy = ANTPageToggleTracker()
        stopped = (0..<100).map { _ in legacy.observe(toggle: false) }
        XCTAssertFalse(stopped.contains(true))
    }

    func testTheTwentyBitDeviceNumber() throws {
        // 863436 = 0xD2CCC: the 16-bit number 0x2CCC, the transmission type's upper nibble 0xD.
        let id = ANTChannelID(deviceNumber: 0x2CCC, deviceTypeByte: 0x80 | 120, transmissionType: 0xD1)
        XCTAssertEqual(id.extendedDeviceNumber, 863_436)
        XCTAssertEqual(id.deviceType, 120)
        XCTAssertEqual(id.device.description, "ant:120:863436")
        XCTAssertEqual(ANTDeviceIdentifier("ant:120:863436"), id.device)
        XCTAssertEqual(ANTChannelID(id.device), ANTChannelID(deviceNumber: 0x2CCC, deviceTypeByte: 120, transmissionType: 0xD1))
        XCTAssertEqual(ANTChannelID(deviceNumber: 0xFFFF, deviceTypeByte: 120, transmissionType: 0xF5).extendedDeviceNumber, 0xF_FFFF)
        XCTAssertEqual(ANTChannelID(deviceNumber: 12345, deviceTypeByte: 120, transmissionType: 0x01).device.description, "ant:120:12345")
        for bad in ["ant:120:1048576", "ant:128:1", "ble:120:1", "ant:120", "ant:120:-1", "ant::1"] {
            XCTAssertNil(ANTDeviceIdentifier(bad), bad)
        }
        let broadcast = try ANTBroadcast(payload: [0, 1, 2, 3, 4, 5, 6, 7, 8, 0x80, 0xCC, 0x2C, 120, 0xD1])
        XCTAssertEqual(broadcast.channelID?.device.description, "ant:120:863436")
        XCTAssertEqual(broadcast.page, [1, 2, 3, 4, 5, 6, 7, 8])
        let everything = ANTBroadcast(channel: 0, page: broadcast.page, channelID: id, rssi: -63, timestamp: 0xBEEF)
        XCTAssertEqual(try ANTBroadcast(payload: everything.bytes), everything)
    }

    func testTheSerialNumberIsPageTwosUpperHalfAboveTheSixteenBitDeviceNumber() {
        // A strap with the 20-bit number 863436 (0xD2CCC) whose serial is 0x000D2CCC: page 2
        // sends 0x000D, whose low nibble is the transmission type's, and the serial equals the
        // device number.
        let extended = ANTDeviceIdentifier(deviceType: 120, deviceNumber: 863_436)
        let serial = ANTSerialNumber(upperBits: 0x000D, of: extended)
        XCTAssertEqual(serial?.value, 0x000D_2CCC, "the nibble is not added a second time")
        XCTAssertEqual(serial?.description, "863436")
        XCTAssertEqual(serial?.upperBits, 0x000D)
        // A serial above 2^20: the upper half from page 2, the lower from the 16-bit number.
        XCTAssertEqual(ANTSerialNumber(upperBits: 0xD2CC, of: extended)?.value, 0xD2CC_2CCC)
        XCTAssertEqual(ANTSerialNumber(upperBits: 0xD2CC, of: extended)?.description, "3536596172")
        let plain = ANTDeviceIdentifier(deviceType: 120, deviceNumber: 12345)
        XCTAssertEqual(ANTSerialNumber(upperBits: 0x0034, of: plain)?.value, 0x0034_3039)
        // All ones: no serial given.
        XCTAssertNil(ANTSerialNumber(upperBits: 0xFFFF, of: plain))
        XCTAssertEqual(ANTSerialNumber(value: 0x2A0D_2CCC).upperBits, 0x2A0D)
    }

    func testTheManufacturerTable() {
        XCTAssertEqual(ANTManufacturer(id: 1).name, "Garmin")
        XCTAssertEqual(ANTManufacturer(id: 23).name, "Suunto")
        XCTAssertEqual(ANTManufacturer(id: 32).name, "Wahoo Fitness")
        XCTAssertEqual(ANTManufacturer(id: 123).name, "Polar Electro")
        XCTAssertEqual(ANTManufacturer(id: 255).name, "Development")
        XCTAssertNil(ANTManufacturer(id: 74).name)
        XCTAssertEqual("\(ANTManufacturer(id: 74))", "manufacturer 74")
    }
}
