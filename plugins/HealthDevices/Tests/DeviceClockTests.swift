import Foundation
import HealthDevices
import HealthModel
import XCTest

/// Current Time values the gateway writes, and which offset a time stamp takes when the gateway
/// set the device's clock during the connection.
final class DeviceClockTests: XCTestCase {
    func testCurrentTimeValueIsExactTime256WithTheManualAdjustReason() {
        // 2027-01-15T08:00:00.5Z, a Friday (5).
        XCTAssertEqual(
            CurrentTime.value(setting: Date(timeIntervalSince1970: 1_800_000_000.5)),
            [0xEB, 0x07, 0x01, 0x0F, 0x08, 0x00, 0x00, 0x05, 0x80, 0x01])
        // 1969-12-29T23:59:59Z, a Monday (1): days before 1970 and the end of a day.
        XCTAssertEqual(
            CurrentTime.value(setting: Date(timeIntervalSince1970: -86_400 * 2 - 1)),
            [0xB1, 0x07, 0x0C, 0x1D, 0x17, 0x3B, 0x3B, 0x01, 0x00, 0x01])
        let written = CurrentTime.value(setting: Date(timeIntervalSince1970: 1_800_000_000))
        XCTAssertEqual(CurrentTime.timestamp(written)?.rfc3339, "2027-01-15T08:00:00-00:00")
        XCTAssertNil(CurrentTime.timestamp([0xEB, 0x07, 0x01]))
    }

    /// The clock ran 120 s fast and was set to UTC at 08:00:00; records arrive at 08:00:30.
    func testWhichClockStampedARecord() {
        let set = DeviceClockSet(at: Date(timeIntervalSince1970: 1_800_000_000))
        let arrival = Date(timeIntervalSince1970: 1_800_000_030)
        func stamp(_ h: Int, _ m: Int, _ s: Int) -> DeviceTimestamp {
            DeviceTimestamp(year: 2027, month: 1, day: 15, hours: h, minutes: m, seconds: s)
        }
        XCTAssertFalse(set.stampedAfter(stamp(7, 58, 0), receivedAt: arrival), "long before the set")
        XCTAssertFalse(set.stampedAfter(stamp(8, 1, 30), receivedAt: arrival), "in the window, but it would lie in the future")
        XCTAssertTrue(set.stampedAfter(stamp(8, 0, 20), receivedAt: arrival), "after the set")
        XCTAssertTrue(set.stampedAfter(stamp(7, 59, 59), receivedAt: arrival), "the second of the set")
        // The limit: a record of the window that arrives more than 120 s after the set reads as the new clock's.
        XCTAssertTrue(set.stampedAfter(stamp(8, 1, 30), receivedAt: Date(timeIntervalSince1970: 1_800_000_200)))
    }

    func testTheMapperTakesTheOffsetOfTheClockThatStampedTheRecord() throws {
        let scale = Device(name: "Scale", localIdentifier: "C0:11:22:33:44:55")
        let mapper = ClinicalRecordMapper(ids: SampleIDGenerator(seed: 7, milliseconds: { 1_800_000_000_000 }))
        let context = ClinicalRecordMapper.Context(
            device: scale, receivedAt: Date(timeIntervalSince1970: 1_800_000_030), deviceClockOffset: -120,
            clockSet: DeviceClockSet(at: Date(timeIntervalSince1970: 1_800_000_000)))
        func weighing(minute: UInt8, second: UInt8) throws -> QuantitySample? {
            let records = try mapper.records(
                WeightMeasurementDecoder.decode([0x02, 0x10, 0x36, 0xEB, 0x07, 0x01, 0x0F, minute < 30 ? 8 : 7, minute, second]),
                context)
            if case .quantity(let sample) = records.first { return sample }
            return nil
        }
        let before = try XCTUnwrap(try weighing(minute: 58, second: 0))
        XCTAssertEqual(before.startDate, Date(timeIntervalSince1970: 1_800_000_000 - 120 - 120))
        XCTAssertEqual(before.metadata[ClinicalRecordMapper.clockOffsetKey], .double(-120))
        let after = try XCTUnwrap(try weighing(minute: 0, second: 20))
        XCTAssertEqual(after.startDate, Date(timeIntervalSince1970: 1_800_000_020))
        XCTAssertEqual(after.metadata[ClinicalRecordMapper.clockOffsetKey], .double(0))
        // A clock that was not set at connection: records of the new clock get its offset, older ones none.
        var unset = context
        unset.deviceClockOffset = nil
        let records = try mapper.records(
            WeightMeasurementDecoder.decode([0x02, 0x10, 0x36, 0xEB, 0x07, 0x01, 0x0F, 7, 58, 0]), unset)
        guard case .quantity(let old) = records.first else { return XCTFail("\(records)") }
        XCTAssertEqual(old.startDate, unset.receivedAt)
        XCTAssertNil(old.metadata[ClinicalRecordMapper.clockOffsetKey])
    }
}
