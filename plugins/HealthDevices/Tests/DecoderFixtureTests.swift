import BLETesting
import Foundation
import GATTDecoding
import GatewayTesting
import HealthDevices
import XCTest

/// Every decoder against the published payloads in Fixtures/, valid and invalid.
final class DecoderFixtureTests: XCTestCase {
    func check(_ name: String, _ decode: ([UInt8]) throws -> MeasurementReport) throws {
        let file = try FixtureFile.load(name)
        for fixture in file.valid {
            assertReport(try decode(fixture.bytes), fixture.expected, fixture.name)
        }
        for fixture in file.invalid {
            XCTAssertThrowsError(try decode(fixture.bytes), fixture.name) { error in
                guard let error = error as? HealthDecodingError else { return XCTFail("\(fixture.name): \(error)") }
                XCTAssertEqual(FixtureFile.ExpectedError(error), fixture.error, fixture.name)
                XCTAssertEqual(error.characteristic.rawValue, file.characteristic, fixture.name)
            }
        }
    }

    func testWeightMeasurement() throws {
        try check("weight-measurement.json") { try WeightMeasurementDecoder.decode($0).report }
    }

    func testBodyCompositionMeasurement() throws {
        try check("body-composition-measurement.json") { try BodyCompositionMeasurementDecoder.decode($0).report }
    }

    func testBloodPressureMeasurement() throws {
        try check("blood-pressure-measurement.json") { try BloodPressureMeasurementDecoder.decode($0).report }
    }

    func testTemperatureMeasurement() throws {
        try check("temperature-measurement.json") { try TemperatureMeasurementDecoder.decode($0).report }
    }

    func testPLXSpotCheckMeasurement() throws {
        try check("plx-spot-check.json") { try PLXMeasurementDecoder.decodeSpotCheck($0).report }
    }

    func testGlucoseMeasurement() throws {
        try check("glucose-measurement.json") { try GlucoseMeasurementDecoder.decode($0).report }
    }

    /// Intermediate Cuff Pressure (0x2A36): the Blood Pressure Measurement layout with the
    /// current cuff pressure first. Payloads from NordicSemiconductor/Android-BLE-Common-Library,
    /// ble-common/src/test/java/no/nordicsemi/android/ble/common/callback/bps/IntermediateCuffPressureDataCallbackTest.java
    /// (onIntermediateCuffPressureReceived_full, _some, _minimal, onInvalidDataReceived_toShort).
    func testIntermediateCuffPressure() throws {
        let full = try BloodPressureMeasurementDecoder.decode(
            hexBytes("1E040000000000000004111429 3B3C00012700"), as: .intermediateCuffPressure)
        XCTAssertEqual(full.systolic, .value(4))
        XCTAssertEqual(full.unit, .mmHg)
        XCTAssertEqual(full.pulseRate, .value(60))
        XCTAssertEqual(full.userID, 1)
        XCTAssertEqual(full.measurementStatus, 0b100111)
        XCTAssertEqual(full.timestamp, DeviceTimestamp(year: 0, month: 4, day: 17, hours: 20, minutes: 41, seconds: 59))
        XCTAssertNil(full.timestamp?.rfc3339, "year 0 is not known")
        let some = try BloodPressureMeasurementDecoder.decode(hexBytes("156FF0000000003C001200"), as: .intermediateCuffPressure)
        XCTAssertEqual(some.unit, .kPa)
        XCTAssertEqual(some.millimetersOfMercury(some.systolic) ?? 0, 11.1 * 1000 / 133.322387415, accuracy: 1e-9)
        XCTAssertNil(some.userID)
        let minimal = try BloodPressureMeasurementDecoder.decode(hexBytes("00D7F000000000"), as: .intermediateCuffPressure)
        XCTAssertEqual(minimal.systolic.number ?? 0, 21.5, accuracy: 1e-12)
        XCTAssertThrowsError(try BloodPressureMeasurementDecoder.decode(hexBytes("010203040506"), as: .intermediateCuffPressure)) {
            XCTAssertEqual(($0 as? HealthDecodingError)?.characteristic, .intermediateCuffPressure)
            XCTAssertEqual("\($0)", "Intermediate Cuff Pressure (0x2A36): field meanArterialPressure at offset 5 is truncated: needs 2 bytes, 1 available")
        }
    }
}
