import FitnessEquipment
import XCTest

/// Every flags value of every measurement characteristic: payloads are built here from the
/// field tables of the specifications, written down again independently of the decoders'
/// layouts, with a distinct filler per field, so a field read at the wrong offset, with the
/// wrong width or the wrong sign shows as a wrong value. Each payload's every truncation must
/// fail with a `.truncated` error pointing into it.
final class FlagCombinationTests: XCTestCase {
    /// One field on the wire: its name, width and sign.
    struct Spec {
        var name: String
        var width: Int
        var signed: Bool
        init(_ name: String, _ width: Int, signed: Bool = false) {
            self.name = name
            self.width = width
            self.signed = signed
        }
    }

    /// Builds a payload: `flags` (little-endian, `flagBytes` wide), then for every group whose
    /// bit is present, its fields filled with bytes that differ per field and per flags value.
    /// Returns the payload and the raw value each field must decode to.
    static func build(
        flags: Int, flagBytes: Int, groups: [(bit: Int, fields: [Spec])], inverted0: Bool
    ) -> ([UInt8], [String: Int]) {
        var payload = (0..<flagBytes).map { UInt8(truncatingIfNeeded: flags >> (8 * $0)) }
        var expected: [String: Int] = [:]
        var seed = flags &* 7 &+ 3
        for group in groups {
            let set = flags & (1 << group.bit) != 0
            guard group.bit == 0 && inverted0 ? !set : set else { continue }
            for field in group.fields {
                var value = 0
                for index in 0..<field.width {
                    seed = (seed &* 1_103_515_245 &+ 12_345) & 0x7FFF_FFFF
                    let byte = UInt8(truncatingIfNeeded: seed >> 16)
                    payload.append(byte)
                    value |= Int(byte) << (8 * index)
                }
                if field.signed, value & (1 << (8 * field.width - 1)) != 0 { value -= 1 << (8 * field.width) }
                expected[field.name] = value
            }
        }
        return (payload, expected)
    }

    // FTMS v1.0 (Treadmill Data), written down again from the specification.
    static let treadmill: [(bit: Int, fields: [Spec])] = [
        (0, [Spec("instantaneousSpeed", 2)]), (1, [Spec("averageSpeed", 2)]), (2, [Spec("totalDistance", 3)]),
        (3, [Spec("inclination", 2, signed: true), Spec("rampAngleSetting", 2, signed: true)]),
        (4, [Spec("positiveElevationGain", 2), Spec("negativeElevationGain", 2)]),
        (5, [Spec("instantaneousPace", 1)]), (6, [Spec("averagePace", 1)]),
        (7, [Spec("totalEnergy", 2), Spec("energyPerHour", 2), Spec("energyPerMinute", 1)]),
        (8, [Spec("heartRate", 1)]), (9, [Spec("metabolicEquivalent", 1)]), (10, [Spec("elapsedTime", 2)]),
        (11, [Spec("remainingTime", 2)]),
        (12, [Spec("forceOnBelt", 2, signed: true), Spec("powerOutput", 2, signed: true)]),
    ]

    // FTMS v1.0 (Indoor Bike Data).
    static let indoorBike: [(bit: Int, fields: [Spec])] = [
        (0, [Spec("instantaneousSpeed", 2)]), (1, [Spec("averageSpeed", 2)]),
        (2, [Spec("instantaneousCadence", 2)]), (3, [Spec("averageCadence", 2)]),
        (4, [Spec("totalDistance", 3)]), (5, [Spec("resistanceLevel", 2, signed: true)]),
        (6, [Spec("instantaneousPower", 2, signed: true)]), (7, [Spec("averagePower", 2, signed: true)]),
        (8, [Spec("totalEnergy", 2), Spec("energyPerHour", 2), Spec("energyPerMinute", 1)]),
        (9, [Spec("heartRate", 1)]), (10, [Spec("metabolicEquivalent", 1)]), (11, [Spec("elapsedTime", 2)]),
        (12, [Spec("remainingTime", 2)]),
    ]

    // FTMS v1.0 (Rower Data).
    static let rower: [(bit: Int, fields: [Spec])] = [
        (0, [Spec("strokeRate", 1), Spec("strokeCount", 2)]), (1, [Spec("averageStrokeRate", 1)]),
        (2, [Spec("totalDistance", 3)]), (3, [Spec("instantaneousPace", 2)]), (4, [Spec("averagePace", 2)]),
        (5, [Spec("instantaneousPower", 2, signed: true)]), (6, [Spec("averagePower", 2, signed: true)]),
        (7, [Spec("resistanceLevel", 2, signed: true)]),
        (8, [Spec("totalEnergy", 2), Spec("energyPerHour", 2), Spec("energyPerMinute", 1)]),
        (9, [Spec("heartRate", 1)]), (10, [Spec("metabolicEquivalent", 1)]), (11, [Spec("elapsedTime", 2)]),
        (12, [Spec("remainingTime", 2)]),
    ]

    // CPS v1.1, Cycling Power Measurement. Bits 1, 3 and 12 carry no field.
    static let cyclingPower: [(bit: Int, fields: [Spec])] = [
        (16, [Spec("instantaneousPower", 2, signed: true)]),  // always present: bit 16 is never a flag
        (0, [Spec("pedalPowerBalance", 1)]), (2, [Spec("accumulatedTorque", 2)]),
        (4, [Spec("cumulativeWheelRevolutions", 4), Spec("lastWheelEventTime", 2)]),
        (5, [Spec("cumulativeCrankRevolutions", 2), Spec("lastCrankEventTime", 2)]),
        (6, [Spec("maximumForceMagnitude", 2, signed: true), Spec("minimumForceMagnitude", 2, signed: true)]),
        (7, [Spec("maximumTorqueMagnitude", 2, signed: true), Spec("minimumTorqueMagnitude", 2, signed: true)]),
        (8, [Spec("extremeAngles", 3)]), (9, [Spec("topDeadSpotAngle", 2)]), (10, [Spec("bottomDeadSpotAngle", 2)]),
        (11, [Spec("accumulatedEnergy", 2)]),
    ]

    // CSCS v1.0, CSC Measurement.
    static let csc: [(bit: Int, fields: [Spec])] = [
        (0, [Spec("cumulativeWheelRevolutions", 4), Spec("lastWheelEventTime", 2)]),
        (1, [Spec("cumulativeCrankRevolutions", 2), Spec("lastCrankEventTime", 2)]),
    ]

    func checkFitnessMachine(
        _ groups: [(bit: Int, fields: [Spec])], _ decode: ([UInt8]) throws(FitnessDecodingError) -> FitnessMachineData
    ) throws {
        var failures: [String] = []
        var lengths = Set<Int>()
        // Bits 0–12 in every combination; bits 13–15 are reserved and set in some.
        for flags in 0..<(1 << 13) {
            let reserved = flags % 5 == 0 ? 0xE000 : 0
            let (payload, expected) = Self.build(flags: flags | reserved, flagBytes: 2, groups: groups, inverted0: true)
            lengths.insert(payload.count)
            let decoded = try decode(payload)
            let raw = Dictionary(uniqueKeysWithValues: decoded.raw.map { ($0.key.rawValue, $0.value) })
            if raw != expected { failures.append("flags \(flags): \(raw) != \(expected)") }
            if decoded.flags != UInt16(flags | reserved) { failures.append("flags \(flags) read as \(decoded.flags)") }
            // The truncations of every 7th value keep the run short; the fixtures cover the rest.
            if flags % 7 == 0 { failures += truncationFailures(payload, "flags \(flags)", decode) }
        }
        XCTAssertEqual(failures.prefix(5), [])
        XCTAssertEqual(failures.count, 0)
        XCTAssertGreaterThan(lengths.count, 20, "payload lengths vary with the flags")
    }

    func testTreadmillDataEveryFlagCombination() throws {
        try checkFitnessMachine(Self.treadmill) { payload throws(FitnessDecodingError) in
            try TreadmillData.decode(payload).data
        }
    }

    func testIndoorBikeDataEveryFlagCombination() throws {
        try checkFitnessMachine(Self.indoorBike) { payload throws(FitnessDecodingError) in
            try IndoorBikeData.decode(payload).data
        }
    }

    func testRowerDataEveryFlagCombination() throws {
        try checkFitnessMachine(Self.rower) { payload throws(FitnessDecodingError) in
            try RowerData.decode(payload).data
        }
    }

    func testCyclingPowerMeasurementEveryFlagCombination() throws {
        var failures: [String] = []
        for flags in 0..<(1 << 13) {
            let (payload, expected) = Self.build(
                flags: flags | 1 << 16, flagBytes: 2, groups: Self.cyclingPower, inverted0: false)
            let m = try CyclingPowerMeasurementDecoder.decode(payload)
            var raw: [String: Int] = ["instantaneousPower": m.instantaneousPower]
            raw["pedalPowerBalance"] = m.pedalPowerBalanceRaw.map(Int.init)
            raw["accumulatedTorque"] = m.accumulatedTorqueRaw.map(Int.init)
            raw["cumulativeWheelRevolutions"] = m.wheel.map { Int($0.cumulativeRevolutions) }
            raw["lastWheelEventTime"] = m.wheel.map { Int($0.lastEventTime) }
            raw["cumulativeCrankRevolutions"] = m.crank.map { Int($0.cumulativeRevolutions) }
            raw["lastCrankEventTime"] = m.crank.map { Int($0.lastEventTime) }
            raw["maximumForceMagnitude"] = m.extremeForceMagnitudes?.maximum
            raw["minimumForceMagnitude"] = m.extremeForceMagnitudes?.minimum
            raw["maximumTorqueMagnitude"] = m.extremeTorqueMagnitudesRaw?.maximum
            raw["minimumTorqueMagnitude"] = m.extremeTorqueMagnitudesRaw?.minimum
            // The test's table reads the three angle octets as one uint24: maximum in the low 12 bits.
            raw["extremeAngles"] = m.extremeAngles.map { $0.maximum | $0.minimum << 12 }
            raw["topDeadSpotAngle"] = m.topDeadSpotAngle
            raw["bottomDeadSpotAngle"] = m.bottomDeadSpotAngle
            raw["accumulatedEnergy"] = m.accumulatedEnergy
            if raw != expected { failures.append("flags \(flags): \(raw) != \(expected)") }
            if m.wheel.map({ $0.counter != .cyclingPowerWheel }) == true { failures.append("flags \(flags): wheel counter") }
            if (m.pedalPowerBalanceReference == .left) != (flags & 0x02 != 0) { failures.append("flags \(flags): reference") }
            if (m.accumulatedTorqueSource == .crankBased) != (flags & 0x08 != 0) { failures.append("flags \(flags): source") }
            if m.offsetCompensationIndicator != (flags & 0x1000 != 0) { failures.append("flags \(flags): offset") }
            if flags % 7 == 0 {
                failures += truncationFailures(payload, "flags \(flags)", CyclingPowerMeasurementDecoder.decode)
            }
        }
        XCTAssertEqual(failures.prefix(5), [])
        XCTAssertEqual(failures.count, 0)
    }

    func testCSCMeasurementEveryFlagsOctet() throws {
        var failures: [String] = []
        for flags in 0...255 {
            let (payload, expected) = Self.build(flags: flags, flagBytes: 1, groups: Self.csc, inverted0: false)
            let m = try CSCMeasurementDecoder.decode(payload)
            var raw: [String: Int] = [:]
            raw["cumulativeWheelRevolutions"] = m.wheel.map { Int($0.cumulativeRevolutions) }
            raw["lastWheelEventTime"] = m.wheel.map { Int($0.lastEventTime) }
            raw["cumulativeCrankRevolutions"] = m.crank.map { Int($0.cumulativeRevolutions) }
            raw["lastCrankEventTime"] = m.crank.map { Int($0.lastEventTime) }
            if raw != expected { failures.append("flags \(flags): \(raw) != \(expected)") }
            if m.wheel.map({ $0.counter != .cscWheel }) == true { failures.append("flags \(flags): wheel counter") }
            failures += truncationFailures(payload, "flags \(flags)", CSCMeasurementDecoder.decode)
        }
        XCTAssertEqual(failures, [])
    }

    /// Arbitrary bytes never crash a decoder: every flags value with every length up to 40 bytes.
    func testArbitraryBytesNeverCrash() {
        var decoded = 0
        var rejected = 0
        for flags in stride(from: 0, to: 1 << 16, by: 97) {
            for length in 0...40 {
                let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 == 0 ? flags : $0 == 1 ? flags >> 8 : $0 &* 37 &+ flags) }
                for outcome in [
                    Result { try CSCMeasurementDecoder.decode(payload) }.map { _ in () },
                    Result { try CyclingPowerMeasurementDecoder.decode(payload) }.map { _ in () },
                    Result { try TreadmillData.decode(payload) }.map { _ in () },
                    Result { try IndoorBikeData.decode(payload) }.map { _ in () },
                    Result { try RowerData.decode(payload) }.map { _ in () },
                    Result { try FitnessMachineStatusDecoder.decode(payload) }.map { _ in () },
                ] {
                    if case .success = outcome { decoded += 1 } else { rejected += 1 }
                }
            }
        }
        XCTAssertGreaterThan(decoded, 0)
        XCTAssertGreaterThan(rejected, 0)
    }
}
