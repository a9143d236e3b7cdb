import BLEProfileKit
import Foundation
import HealthModel
@testable import HeartRateMonitor
import XCTest

/// The mapper alone: payloads in, records and effects out, with no transport, bus or clock.
final class NotificationMapperTests: XCTestCase {
    private let start = Date(timeIntervalSince1970: 1_800_000_000)

    private func mapper(controlPoint: Bool = true) -> NotificationMapper {
        let facts = DeviceSession.Facts(
            device: Device(name: "Strap", localIdentifier: "S-1"), metadata: [.batteryLevel: .integer(80)], location: nil,
            hasControlPoint: controlPoint)
        return NotificationMapper(
            configuration: HeartRateProfileConfiguration(), key: "AA:BB:CC:DD:EE:FF", ids: SampleIDGenerator(seed: 7),
            facts: facts, counters: DeviceSession.Counters())
    }

    /// Flags 0x08: uint8 heart rate and energy expended, no contact support, no RR.
    private func beat(_ bpm: UInt8, energy: UInt16) -> [UInt8] {
        [0x08, bpm, UInt8(energy & 0xFF), UInt8(energy >> 8)]
    }

    private func isReset(_ effect: NotificationMapper.Effect) -> Bool {
        if case .resetEnergyExpended = effect { return true }
        return false
    }

    func testAReadingBecomesASampleWithTheDeviceAndNoEffects() throws {
        var mapper = mapper()
        let output = mapper.heartRate([0x00, 72], at: start)
        XCTAssertTrue(output.effects.isEmpty)
        guard output.records.count == 1, case .quantity(let sample) = output.records[0] else {
            return XCTFail("expected one quantity sample, got \(output.records)")
        }
        XCTAssertEqual(sample.type, .heartRate)
        XCTAssertEqual(try sample.quantity.doubleValue(for: .countPerMinute), 72)
        XCTAssertEqual(sample.device?.localIdentifier, "S-1")
        XCTAssertEqual(sample.metadata[.bleAddress], .string("AA:BB:CC:DD:EE:FF"))
    }

    func testABadPayloadIsCountedAndReportedWithoutRecords() {
        var mapper = mapper()
        let output = mapper.heartRate([0x01, 72], at: start)  // uint16 heart rate, one byte short
        XCTAssertTrue(output.records.isEmpty)
        XCTAssertEqual(mapper.counters.badPayloads, 1)
        guard output.effects.count == 2, case .badPayload(let bytes, _) = output.effects[0],
              case .countersChanged = output.effects[1] else {
            return XCTFail("expected badPayload then countersChanged, got \(output.effects)")
        }
        XCTAssertEqual(bytes, [0x01, 72])
    }

    func testNoContactDropsTheReadingAndSaysSo() {
        var mapper = mapper()
        // Flags 0x04: contact supported and not detected.
        let output = mapper.heartRate([0x04, 90], at: start)
        XCTAssertTrue(output.records.isEmpty)
        XCTAssertEqual(mapper.counters.droppedNoContact, 1)
        guard case .droppedNoContact = output.effects.first else {
            return XCTFail("expected droppedNoContact first, got \(output.effects)")
        }
    }

    func testSaturationAsksForOneResetPerSaturationAndOnlyWithAControlPoint() {
        var mapper = mapper()
        XCTAssertFalse(mapper.heartRate(beat(80, energy: 65_000), at: start).effects.contains(where: isReset))
        XCTAssertEqual(mapper.heartRate(beat(80, energy: 0xFFFF), at: start + 1).effects.filter(isReset).count, 1)
        XCTAssertEqual(mapper.heartRate(beat(80, energy: 0xFFFF), at: start + 2).effects.filter(isReset).count, 0)
        // The counter restarts after the reset; the next saturation asks again.
        XCTAssertEqual(mapper.heartRate(beat(80, energy: 3), at: start + 3).effects.filter(isReset).count, 0)
        XCTAssertEqual(mapper.heartRate(beat(80, energy: 0xFFFF), at: start + 4).effects.filter(isReset).count, 1)

        var withoutControlPoint = self.mapper(controlPoint: false)
        XCTAssertFalse(withoutControlPoint.heartRate(beat(80, energy: 0xFFFF), at: start).effects.contains(where: isReset))
    }
}
