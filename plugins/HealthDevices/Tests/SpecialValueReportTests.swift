import GATTDecoding
import HealthDevices
import XCTest

/// IEEE 11073 special values (``MedicalFloat``) in the reports `healthgate decode` prints: null,
/// never a number.
final class SpecialValueReportTests: XCTestCase {
    func testSpecialValuesPrintAsNull() throws {
        // A cuff that sends NaN for the mean arterial pressure and NRes for the pulse rate.
        let measurement = try BloodPressureMeasurementDecoder.decode([0x04, 0x78, 0x00, 0x50, 0x00, 0xFF, 0x07, 0x00, 0x08])
        XCTAssertEqual(measurement.report["meanArterialPressure"], .null)
        XCTAssertEqual(measurement.report["pulseRate"], .null)
        XCTAssertEqual(measurement.report["systolic"], .number(120))
        let thermometer = try TemperatureMeasurementDecoder.decode([0x00, 0xFE, 0xFF, 0x7F, 0x00])
        XCTAssertEqual(thermometer.temperature, .positiveInfinity)
        XCTAssertEqual(thermometer.report["temperature"], .null)
    }
}
