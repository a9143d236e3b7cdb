import FitnessEquipment
import XCTest
import GATTDecoding

/// The read-only characteristics (features, sensor location) and Fitness Machine Status.
final class FeatureAndStatusTests: XCTestCase {
    func testCSCFeature() throws {
        // NordicSemiconductor/Android-BLE-Common-Library,
        // ble-common/src/test/java/no/nordicsemi/android/ble/common/callback/csc/CyclingSpeedAndCadenceFeatureDataCallbackTest.java:
        // 0x03 0x00 is wheel and crank data without multiple locations; a single byte is invalid.
        let feature = try CSCFeatureDecoder.decode([0x03, 0x00])
        XCTAssertTrue(feature.wheelRevolutionDataSupported)
        XCTAssertTrue(feature.crankRevolutionDataSupported)
        XCTAssertFalse(feature.multipleSensorLocationsSupported)
        XCTAssertEqual(feature.rawValue, 0x03)
        XCTAssertThrowsError(try CSCFeatureDecoder.decode([0x03])) { error in
            XCTAssertEqual((error as? FitnessDecodingError)?.code, .truncated)
            XCTAssertEqual((error as? FitnessDecodingError)?.field, "cscFeature")
        }
        // CSCS v1.0, CSC Feature: bit 2 is multiple sensor locations; the value is exactly two octets.
        XCTAssertTrue(try CSCFeatureDecoder.decode([0x04, 0x00]).multipleSensorLocationsSupported)
        XCTAssertThrowsError(try CSCFeatureDecoder.decode([0x03, 0x00, 0x00])) { error in
            XCTAssertEqual((error as? FitnessDecodingError)?.code, .unexpectedLength)
        }
    }

    func testCyclingPowerFeature() throws {
        // CPS v1.1, Cycling Power Feature: bits 2 and 3 are wheel and crank data, bit 16 torque-based
        // context, bits 20–21 distributed system support (0b10: for use in a distributed system).
        let feature = try CyclingPowerFeatureDecoder.decode([0x0C, 0x00, 0x21, 0x00])
        XCTAssertTrue(feature.wheelRevolutionDataSupported)
        XCTAssertTrue(feature.crankRevolutionDataSupported)
        XCTAssertTrue(feature.measuresTorque)
        XCTAssertEqual(feature.distributedSystemSupport, 2)
        XCTAssertEqual(feature.supported, ["wheelRevolutionData", "crankRevolutionData", "sensorMeasurementContextTorque"])
        XCTAssertEqual(try CyclingPowerFeatureDecoder.decode([0xFF, 0xFF, 0x0F, 0x00]).supported.count, 20)
        for length in 0..<4 {
            XCTAssertThrowsError(try CyclingPowerFeatureDecoder.decode([UInt8](repeating: 0, count: length))) { error in
                XCTAssertEqual((error as? FitnessDecodingError)?.code, .truncated)
                XCTAssertEqual((error as? FitnessDecodingError)?.available, length)
            }
        }
    }

    func testSensorLocation() throws {
        // GATT Specification Supplement, Sensor Location: 0 other … 16 chain ring, 17–255 reserved.
        for code in 0...16 {
            XCTAssertEqual(try SensorLocationDecoder.decode([UInt8(code)]).rawValue, code)
        }
        XCTAssertEqual(try SensorLocationDecoder.decode([5]), .leftCrank)
        XCTAssertEqual(try SensorLocationDecoder.decode([15]).name, "spider")
        XCTAssertThrowsError(try SensorLocationDecoder.decode([17])) { error in
            XCTAssertEqual((error as? FitnessDecodingError)?.code, .reservedValue)
            XCTAssertEqual((error as? FitnessDecodingError)?.value, 17)
        }
        XCTAssertThrowsError(try SensorLocationDecoder.decode([])) { error in
            XCTAssertEqual((error as? FitnessDecodingError)?.code, .truncated)
        }
    }

    func testFitnessMachineFeature() throws {
        // FTMS v1.0, Fitness Machine Feature: an indoor bike with cadence (1), total distance (2), resistance (7),
        // expended energy (9), heart rate (10), elapsed time (12) and power (14); targets:
        // resistance (2), power (3) and indoor bike simulation (13).
        let feature = try FitnessMachineFeatureDecoder.decode([0x86, 0x56, 0x00, 0x00, 0x0C, 0x20, 0x00, 0x00])
        XCTAssertEqual(
            feature.supportedFeatures,
            ["cadence", "totalDistance", "resistanceLevel", "expendedEnergy", "heartRateMeasurement", "elapsedTime", "powerMeasurement"])
        XCTAssertEqual(feature.supportedTargets, ["resistanceTarget", "powerTarget", "indoorBikeSimulationParameters"])
        XCTAssertThrowsError(try FitnessMachineFeatureDecoder.decode([0x86, 0x56, 0x00, 0x00, 0x0C])) { error in
            XCTAssertEqual((error as? FitnessDecodingError)?.field, "targetSettingFeatures")
            XCTAssertEqual((error as? FitnessDecodingError)?.available, 1)
        }
    }

    func testFitnessMachineStatus() throws {
        // FTMS v1.0, Fitness Machine Status: op code, then the parameter the op code defines.
        let rows: [([UInt8], FitnessMachineStatus)] = [
            ([0x01], .reset),
            ([0x02, 0x01], .stoppedOrPausedByUser(paused: false)),
            ([0x02, 0x02], .stoppedOrPausedByUser(paused: true)),
            ([0x03], .stoppedBySafetyKey),
            ([0x04], .startedOrResumedByUser),
            ([0x05, 0xE8, 0x03], .targetSpeedChanged(metersPerSecond: 1000.0 / 360)),
            ([0x06, 0xCE, 0xFF], .targetInclineChanged(percent: -5)),
            ([0x07, 0x32], .targetResistanceLevelChanged(5)),
            ([0x08, 0xC8, 0x00], .targetPowerChanged(watts: 200)),
            ([0x09, 0x8C], .targetHeartRateChanged(beatsPerMinute: 140)),
            ([0x0A, 0xF4, 0x01], .targetedExpendedEnergyChanged(kilocalories: 500)),
            ([0x0D, 0x10, 0x27, 0x00], .targetedDistanceChanged(meters: 10_000)),
            ([0x0E, 0x08, 0x07], .targetedTrainingTimeChanged(seconds: 1800)),
            (
                [0x12, 0xE8, 0x03, 0xC8, 0x00, 0x28, 0x33],
                .indoorBikeSimulationParametersChanged(windSpeed: 1, grade: 2, rollingResistance: 0.004, windResistance: 0.51)
            ),
            ([0x13, 0x3A, 0x52], .wheelCircumferenceChanged(meters: 2.1050)),
            ([0x15, 0xB4, 0x00], .targetedCadenceChanged(perMinute: 90)),
            ([0xFF], .controlPermissionLost),
            ([0x14, 0x01], .other(opCode: 0x14, parameter: [0x01])),
        ]
        for (payload, expected) in rows {
            XCTAssertEqual(try FitnessMachineStatusDecoder.decode(payload), expected, "\(payload)")
        }
        XCTAssertThrowsError(try FitnessMachineStatusDecoder.decode([0x08, 0xC8])) { error in
            XCTAssertEqual((error as? FitnessDecodingError)?.field, "targetPower")
        }
        XCTAssertThrowsError(try FitnessMachineStatusDecoder.decode([])) { error in
            XCTAssertEqual((error as? FitnessDecodingError)?.field, "opCode")
        }
    }
}
