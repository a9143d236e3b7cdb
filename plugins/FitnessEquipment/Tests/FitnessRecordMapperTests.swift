import FitnessEquipment
import Foundation
import GATTDecoding
import HealthModel
import XCTest

/// Decoded frames to samples: speed, cadence and distance from CSC and Cycling Power counters
/// (rollovers, a stopped wheel), power, and the three Fitness Machines with split records.
final class FitnessRecordMapperTests: XCTestCase {
    private let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    private let device = Device(name: "Trainer", manufacturer: "Acme", localIdentifier: "C0:FF:EE:00:00:01")

    private func mapper(circumference: Double = 2) throws -> FitnessRecordMapper {
        var metadata = Metadata()
        metadata[MetadataKey("healthgate.bleAddress")] = .string("C0:FF:EE:00:00:01")
        return try FitnessRecordMapper(
            wheelCircumference: circumference, ids: SampleIDGenerator(seed: 15, milliseconds: { 1_800_000_000_000 }),
            device: device, metadata: metadata)
    }

    private func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    // MARK: Payload builders (little-endian, the fields in wire order)

    private func le(_ value: Int, _ width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    private func csc(wheel: (UInt32, UInt16)? = nil, crank: (UInt16, UInt16)? = nil) -> [UInt8] {
        var flags: UInt8 = 0
        var fields: [UInt8] = []
        if let (revolutions, time) = wheel {
            flags |= 1
            fields += le(Int(revolutions), 4) + le(Int(time), 2)
        }
        if let (revolutions, time) = crank {
            flags |= 2
            fields += le(Int(revolutions), 2) + le(Int(time), 2)
        }
        return [flags] + fields
    }

    private func power(_ watts: Int, wheel: (UInt32, UInt16)? = nil, crank: (UInt16, UInt16)? = nil) -> [UInt8] {
        var flags = 0
        var fields: [UInt8] = []
        if let (revolutions, time) = wheel {
            flags |= 0x10
            fields += le(Int(revolutions), 4) + le(Int(time), 2)
        }
        if let (revolutions, time) = crank {
            flags |= 0x20
            fields += le(Int(revolutions), 2) + le(Int(time), 2)
        }
        return le(flags, 2) + le(watts, 2) + fields
    }

    private func types(_ samples: [QuantitySample]) -> [String] { samples.map(\.type.identifier) }

    private func value(_ samples: [QuantitySample], _ type: QuantityType) -> Double? {
        samples.first { $0.type == type }?.canonicalValue
    }

    // MARK: Cycling Speed and Cadence

    func testCSCGivesSpeedDistanceAndCadenceFromTheSecondMeasurement() throws {
        var m = try mapper()
        XCTAssertEqual(try m.map(csc(wheel: (100, 0), crank: (10, 0)), of: .cscMeasurement, at: at(0)), [])
        let samples = try m.map(csc(wheel: (104, 1024), crank: (11, 1024)), of: .cscMeasurement, at: at(1))
        XCTAssertEqual(types(samples), ["cyclingSpeed", "distanceCycling", "cyclingCadence"])
        XCTAssertEqual(try XCTUnwrap(value(samples, .cyclingSpeed)), 8, accuracy: 1e-9)  // 4 × 2 m in 1 s
        XCTAssertEqual(try XCTUnwrap(value(samples, .cyclingCadence)), 60, accuracy: 1e-9)
        let distance = try XCTUnwrap(samples.first { $0.type == .distanceCycling })
        XCTAssertEqual(distance.canonicalValue, 8, accuracy: 1e-9)
        XCTAssertEqual(distance.startDate, at(0))
        XCTAssertEqual(distance.endDate, at(1))
        for sample in samples {
            XCTAssertEqual(sample.device, device)
            XCTAssertEqual(sample.metadata[MetadataKey("healthgate.bleAddress")], .string("C0:FF:EE:00:00:01"))
        }
        XCTAssertEqual(Set(samples.map(\.id)).count, samples.count, "every sample has its own id")
    }

    func testCSCRolloversOfBothCountersAndBothEventTimes() throws {
        var m = try mapper()
        _ = try m.map(csc(wheel: (0xFFFF_FFFE, 0xFC00), crank: (0xFFFF, 0xFE00)), of: .cscMeasurement, at: at(0))
        let samples = try m.map(csc(wheel: (2, 0x0000), crank: (1, 0x0200)), of: .cscMeasurement, at: at(1))
        XCTAssertEqual(try XCTUnwrap(value(samples, .cyclingSpeed)), 8, accuracy: 1e-9)  // 4 revolutions in 1 s
        XCTAssertEqual(try XCTUnwrap(value(samples, .distanceCycling)), 8, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(value(samples, .cyclingCadence)), 120, accuracy: 1e-9)  // 2 in 1 s
    }

    func testCSCStoppedWheelGivesZeroSpeedOnceAndNoDistance() throws {
        var m = try mapper()
        _ = try m.map(csc(wheel: (10, 1000)), of: .cscMeasurement, at: at(0))
        _ = try m.map(csc(wheel: (12, 2024)), of: .cscMeasurement, at: at(1))
        XCTAssertEqual(try m.map(csc(wheel: (12, 2024)), of: .cscMeasurement, at: at(2)), [], "within the stop timeout")
        let stopped = try m.map(csc(wheel: (12, 2024)), of: .cscMeasurement, at: at(4))
        XCTAssertEqual(types(stopped), ["cyclingSpeed"])
        XCTAssertEqual(value(stopped, .cyclingSpeed), 0)
        XCTAssertEqual(try m.map(csc(wheel: (12, 2024)), of: .cscMeasurement, at: at(5)), [], "a stop is reported once")
        let moving = try m.map(csc(wheel: (13, 2536)), of: .cscMeasurement, at: at(5.5))
        XCTAssertEqual(try XCTUnwrap(value(moving, .cyclingSpeed)), 4, accuracy: 1e-9)  // 1 × 2 m in 0.5 s
    }

    func testConsecutiveDistanceSamplesDoNotOverlap() throws {
        var m = try mapper()
        _ = try m.map(csc(wheel: (0, 0)), of: .cscMeasurement, at: at(0))
        let first = try m.map(csc(wheel: (2, 1024)), of: .cscMeasurement, at: at(1.2))
        // The second one's revolutions took 1 s of sensor time, but the first sample ends at 1.2.
        let second = try m.map(csc(wheel: (4, 2048)), of: .cscMeasurement, at: at(2))
        let a = try XCTUnwrap(first.first { $0.type == .distanceCycling })
        let b = try XCTUnwrap(second.first { $0.type == .distanceCycling })
        XCTAssertEqual(b.startDate, a.endDate)
        XCTAssertEqual(b.endDate, at(2))
    }

    func testAWheelCircumferenceThatIsNotAPositiveLengthIsRejected() {
        for circumference in [0, -2.1, .nan, .infinity] {
            XCTAssertThrowsError(try mapper(circumference: circumference)) { error in
                XCTAssertTrue(error is CyclingSpeedCadenceCalculator.InvalidCircumference, "\(circumference)")
            }
        }
    }

    func testABadPayloadIsATypedErrorAndLeavesTheBaseline() throws {
        var m = try mapper()
        _ = try m.map(csc(wheel: (100, 0)), of: .cscMeasurement, at: at(0))
        XCTAssertThrowsError(try m.map([0x01, 0x65, 0x00], of: .cscMeasurement, at: at(0.5))) { error in
            XCTAssertEqual((error as? FitnessDecodingError)?.field, "cumulativeWheelRevolutions")
        }
        let samples = try m.map(csc(wheel: (101, 1024)), of: .cscMeasurement, at: at(1))
        XCTAssertEqual(try XCTUnwrap(value(samples, .cyclingSpeed)), 2, accuracy: 1e-9)
    }

    func testCharacteristicsWithoutMeasurementsGiveNothing() throws {
        var m = try mapper()
        XCTAssertEqual(try m.map([0x03, 0x00], of: .cscFeature, at: at(0)), [])
        XCTAssertEqual(try m.map([0x0D], of: .sensorLocation, at: at(0)), [])
        XCTAssertEqual(try m.map([0x04], of: .fitnessMachineStatus, at: at(0)), [])
    }

    // MARK: Cycling Power

    func testCyclingPowerWithRevolutionDataUsesTheWheelTimeIn2048thsOfASecond() throws {
        var m = try mapper()
        let first = try m.map(power(240, wheel: (0, 0), crank: (0, 0)), of: .cyclingPowerMeasurement, at: at(0))
        XCTAssertEqual(types(first), ["cyclingPower"], "the first revolution data is the baseline")
        let samples = try m.map(power(250, wheel: (5, 2048), crank: (1, 1024)), of: .cyclingPowerMeasurement, at: at(1))
        XCTAssertEqual(types(samples), ["cyclingPower", "cyclingSpeed", "distanceCycling", "cyclingCadence"])
        XCTAssertEqual(value(samples, .cyclingPower), 250)
        XCTAssertEqual(try XCTUnwrap(value(samples, .cyclingSpeed)), 10, accuracy: 1e-9)  // 5 × 2 m in 2048/2048 s
        XCTAssertEqual(try XCTUnwrap(value(samples, .distanceCycling)), 10, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(value(samples, .cyclingCadence)), 60, accuracy: 1e-9)
    }

    func testCyclingPowerAloneAndNegativePower() throws {
        var m = try mapper()
        let samples = try m.map(power(180), of: .cyclingPowerMeasurement, at: at(0))
        XCTAssertEqual(types(samples), ["cyclingPower"])
        XCTAssertEqual(samples.first?.quantity, Quantity(180, .watt))
        XCTAssertEqual(try m.map(power(-10), of: .cyclingPowerMeasurement, at: at(1)), [])
    }

    // MARK: Fitness Machines

    func testIndoorBikeGivesCyclingTypesAndDistanceDeltas() throws {
        var m = try mapper()
        // The README's example: 25 km/h, 90 /min, 10 000 m, 200 W.
        let first = try m.map(hex("5400C409B400102700C800"), of: .indoorBikeData, at: at(0))
        XCTAssertEqual(types(first), ["cyclingSpeed", "cyclingCadence", "cyclingPower"])
        XCTAssertEqual(try XCTUnwrap(value(first, .cyclingSpeed)), 25 / 3.6, accuracy: 1e-9)
        XCTAssertEqual(value(first, .cyclingCadence), 90)
        XCTAssertEqual(value(first, .cyclingPower), 200)
        let second = try m.map(le(0x54, 2) + le(2500, 2) + le(180, 2) + le(10_020, 3) + le(210, 2), of: .indoorBikeData, at: at(2))
        let distance = try XCTUnwrap(second.first { $0.type == .distanceCycling })
        XCTAssertEqual(distance.canonicalValue, 20)
        XCTAssertEqual(distance.startDate, at(0))
        XCTAssertEqual(distance.endDate, at(2))
    }

    func testIndoorBikeRecordSplitAcrossTwoNotifications() throws {
        var m = try mapper()
        // More Data set, Instantaneous Power (bit 6) only: held until the last part.
        XCTAssertEqual(try m.map(le(0x41, 2) + le(150, 2), of: .indoorBikeData, at: at(0)), [])
        // The last part: bit 0 clear (speed present) and cadence.
        let samples = try m.map(le(0x04, 2) + le(900, 2) + le(160, 2), of: .indoorBikeData, at: at(0.1))
        XCTAssertEqual(Set(types(samples)), ["cyclingSpeed", "cyclingCadence", "cyclingPower"])
        XCTAssertEqual(try XCTUnwrap(value(samples, .cyclingSpeed)), 2.5, accuracy: 1e-9)
        XCTAssertEqual(value(samples, .cyclingCadence), 80)
        XCTAssertEqual(value(samples, .cyclingPower), 150)
    }

    func testLinkLostEmitsThePendingPartAndForgetsTheBaselines() throws {
        var m = try mapper()
        _ = try m.map(hex("5400C409B400102700C800"), of: .indoorBikeData, at: at(0))
        _ = try m.map(csc(wheel: (100, 0)), of: .cscMeasurement, at: at(0))
        XCTAssertEqual(try m.map(le(0x41, 2) + le(120, 2), of: .indoorBikeData, at: at(1)), [])
        let flushed = m.linkLost(at: at(1.5))
        XCTAssertEqual(types(flushed), ["cyclingPower"])
        XCTAssertEqual(value(flushed, .cyclingPower), 120)
        XCTAssertEqual(m.linkLost(at: at(1.6)), [], "nothing is pending twice")
        let after = try m.map(le(0x54, 2) + le(2500, 2) + le(180, 2) + le(10_500, 3) + le(210, 2), of: .indoorBikeData, at: at(9))
        XCTAssertFalse(types(after).contains("distanceCycling"), "the first total after a reconnect is a baseline")
        XCTAssertEqual(try m.map(csc(wheel: (104, 1024)), of: .cscMeasurement, at: at(9)), [], "so is the first wheel reading")
    }

    func testTreadmillGivesRunningSpeedDistanceAndPowerAndSurvivesAReset() throws {
        var m = try mapper()
        let first = try m.map(hex("0C00E20488130032000000"), of: .treadmillData, at: at(0))  // 12.5 km/h, 5000 m
        XCTAssertEqual(types(first), ["runningSpeed"])
        XCTAssertEqual(try XCTUnwrap(value(first, .runningSpeed)), 12.5 / 3.6, accuracy: 1e-9)
        // Bits 2 and 12: total distance, force on belt and power output.
        let second = try m.map(le(0x1004, 2) + le(1300, 2) + le(5100, 3) + le(40, 2) + le(310, 2), of: .treadmillData, at: at(30))
        XCTAssertEqual(types(second), ["runningSpeed", "distanceWalkingRunning", "runningPower"])
        XCTAssertEqual(value(second, .distanceWalkingRunning), 100)
        XCTAssertEqual(value(second, .runningPower), 310)
        let reset = try m.map(le(0x0004, 2) + le(1300, 2) + le(30, 3), of: .treadmillData, at: at(40))
        XCTAssertEqual(value(reset, .distanceWalkingRunning), 30, "a total that went down counts from zero")
    }

    func testRowerGivesStrokeRateSpeedPowerAndDistance() throws {
        var m = try mapper()
        let first = try m.map(hex("24003C9600E80300FA00"), of: .rowerData, at: at(0))  // 30 /min, 1000 m, 250 W
        XCTAssertEqual(types(first), ["rowingStrokeRate", "rowingPower"])
        XCTAssertEqual(value(first, .rowingStrokeRate), 30)
        XCTAssertEqual(value(first, .rowingPower), 250)
        // Bits 2, 3 and 5: distance, pace 125 s per 500 m (4 m/s), power.
        let second = try m.map(
            le(0x2C, 2) + le(62, 1) + le(152, 2) + le(1040, 3) + le(125, 2) + le(260, 2), of: .rowerData, at: at(10))
        XCTAssertEqual(types(second), ["rowingStrokeRate", "rowingSpeed", "rowingPower", "distanceRowing"])
        XCTAssertEqual(value(second, .rowingStrokeRate), 31)
        XCTAssertEqual(try XCTUnwrap(value(second, .rowingSpeed)), 4, accuracy: 1e-9)
        XCTAssertEqual(value(second, .distanceRowing), 40)
    }

    private func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
