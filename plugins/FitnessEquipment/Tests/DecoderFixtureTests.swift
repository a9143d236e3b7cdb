import BLETesting
import FitnessEquipment
import GATTDecoding
import GatewayTesting
import XCTest

/// The decoders against payloads published by independent projects' test suites and built from
/// the specifications (Fixtures/*.json cite each one), every truncation of each, and the
/// fixtures' invalid payloads.
final class DecoderFixtureTests: XCTestCase {
    /// The keys of `healthgate decode csc-measurement`.
    static func json(_ m: CSCMeasurement) -> [String: Double?] {
        [
            "cumulativeWheelRevolutions": m.cumulativeWheelRevolutions.map(Double.init),
            "lastWheelEventTime": m.lastWheelEventTime,
            "cumulativeCrankRevolutions": m.cumulativeCrankRevolutions.map(Double.init),
            "lastCrankEventTime": m.lastCrankEventTime,
        ]
    }

    static func json(_ m: CyclingPowerMeasurement) -> [String: Double?] {
        let flag = { (set: Bool) -> Double? in set ? 1 : 0 }
        return [
            "instantaneousPower": Double(m.instantaneousPower),
            "pedalPowerBalance": m.pedalPowerBalance,
            "accumulatedTorque": m.accumulatedTorque,
            "cumulativeWheelRevolutions": m.cumulativeWheelRevolutions.map(Double.init),
            "lastWheelEventTime": m.lastWheelEventTime,
            "cumulativeCrankRevolutions": m.cumulativeCrankRevolutions.map(Double.init),
            "lastCrankEventTime": m.lastCrankEventTime,
            "maximumForceMagnitude": m.extremeForceMagnitudes.map { Double($0.maximum) },
            "minimumForceMagnitude": m.extremeForceMagnitudes.map { Double($0.minimum) },
            "maximumTorqueMagnitude": m.extremeTorqueMagnitudesRaw.map { Double($0.maximum) / 32 },
            "minimumTorqueMagnitude": m.extremeTorqueMagnitudesRaw.map { Double($0.minimum) / 32 },
            "maximumAngle": m.extremeAngles.map { Double($0.maximum) },
            "minimumAngle": m.extremeAngles.map { Double($0.minimum) },
            "topDeadSpotAngle": m.topDeadSpotAngle.map(Double.init),
            "bottomDeadSpotAngle": m.bottomDeadSpotAngle.map(Double.init),
            "accumulatedEnergy": m.accumulatedEnergy.map(Double.init),
            "pedalPowerBalanceReferenceLeft": flag(m.pedalPowerBalanceReference == .left),
            "accumulatedTorqueSourceCrank": flag(m.accumulatedTorqueSource == .crankBased),
            "offsetCompensationIndicator": flag(m.offsetCompensationIndicator),
        ]
    }

    /// The keys every Fitness Machine data record has, merged with the record's own.
    static func json(_ m: some FitnessMachineRecord, _ own: [String: Double?]) -> [String: Double?] {
        let shared: [String: Double?] = [
            "totalDistance": m.totalDistance, "totalEnergy": m.totalEnergy, "heartRate": m.heartRate,
            "metabolicEquivalent": m.metabolicEquivalent, "elapsedTime": m.elapsedTime,
            "remainingTime": m.remainingTime, "energyPerHour": m.energyPerHour,
            "energyPerMinute": m.energyPerMinute,
        ]
        return shared.merging(own) { $1 }
    }

    static func json(_ m: TreadmillData) -> [String: Double?] {
        json(m, [
            "instantaneousSpeed": m.instantaneousSpeed, "inclination": m.inclination,
            "averageSpeed": m.averageSpeed, "rampAngleSetting": m.rampAngleSetting,
            "positiveElevationGain": m.positiveElevationGain, "negativeElevationGain": m.negativeElevationGain,
            "forceOnBelt": m.forceOnBelt, "powerOutput": m.powerOutput,
            "instantaneousPace": m.instantaneousPace, "averagePace": m.averagePace,
        ])
    }

    static func json(_ m: IndoorBikeData) -> [String: Double?] {
        json(m, [
            "instantaneousSpeed": m.instantaneousSpeed, "instantaneousCadence": m.instantaneousCadence,
            "instantaneousPower": m.instantaneousPower, "averageSpeed": m.averageSpeed,
            "averageCadence": m.averageCadence, "resistanceLevel": m.resistanceLevel,
            "averagePower": m.averagePower,
        ])
    }

    static func json(_ m: RowerData) -> [String: Double?] {
        json(m, [
            "strokeRate": m.strokeRate, "strokeCount": m.strokeCount.map(Double.init),
            "instantaneousPower": m.instantaneousPower, "averageStrokeRate": m.averageStrokeRate,
            "instantaneousPace": m.instantaneousPace, "averagePace": m.averagePace,
            "rowingSpeed": m.instantaneousSpeed, "averagePower": m.averagePower,
            "resistanceLevel": m.resistanceLevel,
        ])
    }

    func run<T: Equatable>(
        _ fileName: String, _ decode: ([UInt8]) throws(FitnessDecodingError) -> T,
        _ json: (T) -> [String: Double?]
    ) throws {
        let file = try FixtureFile.load(fileName)
        for fixture in file.valid {
            let payload = fixture.bytes
            let decoded = try decode(payload)
            assertValues(json(decoded), fixture.expected, fixture.name)
            assertValues(json(decoded), fixture.extra ?? [:], fixture.name)
            XCTAssertEqual(truncationFailures(payload, fixture.name, decode), [])
        }
        for fixture in file.invalid {
            XCTAssertThrowsError(try decode(fixture.bytes), fixture.name) { error in
                guard let error = error as? FitnessDecodingError else { return XCTFail("\(fixture.name): \(error)") }
                XCTAssertEqual(FixtureFile.ExpectedError(error), fixture.error, fixture.name)
                XCTAssertTrue(error.description.contains(error.field), error.description)
            }
        }
    }

    func testCSCMeasurementFixtures() throws {
        try run("csc-measurement.json", CSCMeasurementDecoder.decode, Self.json)
    }

    func testCyclingPowerMeasurementFixtures() throws {
        try run("cycling-power-measurement.json", CyclingPowerMeasurementDecoder.decode, Self.json)
    }

    func testTreadmillDataFixtures() throws {
        try run("treadmill-data.json", TreadmillData.decode, Self.json)
    }

    func testIndoorBikeDataFixtures() throws {
        try run("indoor-bike-data.json", IndoorBikeData.decode, Self.json)
    }

    func testRowerDataFixtures() throws {
        try run("rower-data.json", RowerData.decode, Self.json)
    }

    /// The error text names the characteristic, the field, the offset and the byte counts.
    func testErrorDescription() {
        XCTAssertThrowsError(try CyclingPowerMeasurementDecoder.decode([0x00, 0x00, 0xFA])) { error in
            XCTAssertEqual(
                "\(error)",
                "Cycling Power Measurement (0x2A63): field instantaneousPower at offset 2 is truncated: needs 2 bytes, 1 available")
        }
        XCTAssertThrowsError(try SensorLocationDecoder.decode([5, 0])) { error in
            XCTAssertEqual("\(error)", "Sensor Location (0x2A5D): expected 1 byte, got 2")
        }
    }
}
