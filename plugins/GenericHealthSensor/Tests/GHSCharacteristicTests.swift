import BLETesting
import GATTDecoding
import GenericHealthSensor
import XCTest

/// The service's other characteristics and descriptors: features, schedules, valid ranges,
/// security levels and the two control points, with the bytes the published sensors send.
final class GHSCharacteristicTests: XCTestCase {
    /// ghs_app.c's Health Sensor Features (`GHS_APP_Init`): flags 0x01, the pulse oximeter's two
    /// types, and the blood pressure specialization `BloodPressure = 0x00011007` written as its
    /// three low bytes, 07 10 01 (Philips' `DeviceSpecialization.asByteArray` writes the same).
    func testFeatures() throws {
        let features = try GHSHealthSensorFeatures.decode(hexBytes("01 02 B84B0200 1A480200 01 071001"))
        XCTAssertEqual(features.supportedObservationTypes, [150_456, 149_530])
        XCTAssertEqual(features.deviceSpecializations, [GHSDeviceSpecialization(termCode: 0x1007, version: 1)])
        XCTAssertEqual(features.deviceSpecializations?.first?.mdcCode, 528_391)
        XCTAssertEqual(features.deviceSpecializations?.first?.description, "528391 version 1")
        let plain = try GHSHealthSensorFeatures.decode(hexBytes("00 01 B84B0200"))
        XCTAssertEqual(plain, GHSHealthSensorFeatures(supportedObservationTypes: [150_456]))
        XCTAssertNil(plain.deviceSpecializations)
        assertError(
            try GHSHealthSensorFeatures.decode(hexBytes("02 00")), .reservedValue, field: "flags",
            characteristic: .healthSensorFeatures)
        assertError(
            try GHSHealthSensorFeatures.decode(hexBytes("00 03 B84B0200")), .truncated, field: "supportedObservationTypes",
            characteristic: .healthSensorFeatures)
        assertError(
            try GHSHealthSensorFeatures.decode(hexBytes("01 00 02 071001")), .truncated, field: "deviceSpecializations",
            characteristic: .healthSensorFeatures)
        assertError(
            try GHSHealthSensorFeatures.decode(hexBytes("00 00 00")), .unexpectedLength, field: "value",
            characteristic: .healthSensorFeatures)
        assertError(try GHSHealthSensorFeatures.decode([]), .truncated, field: "flags", characteristic: .healthSensorFeatures)
    }

    /// ghs_app.c's `MeasurementPeriod` and `UpdateInterval` (0xFF00000A: 10 × 10^-1 s), the
    /// schedule the gateway writes, and Observation Schedule Changed.
    func testSchedule() throws {
        let schedule = try GHSObservationSchedule.decode(hexBytes("B84B0200 0A0000FF 0A0000FF"))
        XCTAssertEqual(schedule, GHSObservationSchedule(type: 150_456, measurementPeriodSeconds: 1, updateIntervalSeconds: 1))
        XCTAssertEqual(schedule.description, "type 150456: measures every 1.0 s, sends every 1.0 s")
        // 2000 × 10^-3 s, as a sensor may send it.
        let changed = try GHSObservationSchedule.decode(
            hexBytes("82410200 D00700FD D00700FD"), characteristic: .observationScheduleChanged)
        XCTAssertEqual(changed.measurementPeriod, .value(2))
        XCTAssertEqual(changed.updateInterval, .value(2))
        // What the gateway writes: the shortest exact FLOAT of each number.
        let written = GHSObservationSchedule(type: 150_456, measurementPeriodSeconds: 0.5, updateIntervalSeconds: 30)
        XCTAssertEqual(written.encoded, hexBytes("B84B0200 050000FF 03000001"))
        XCTAssertEqual(try GHSObservationSchedule.decode(written.encoded), written)
        assertError(
            try GHSObservationSchedule.decode(hexBytes("B84B0200 0A0000FF 0A0000")), .truncated, field: "updateIntervalSeconds",
            characteristic: .observationSchedule)
        assertError(
            try GHSObservationSchedule.decode(
                hexBytes("B84B0200 0A0000FF 0A0000FF 00"), characteristic: .observationScheduleChanged),
            .unexpectedLength, field: "value", characteristic: .observationScheduleChanged)
    }

    /// FLOAT encoding: exact numbers with their shortest mantissa, special values as their
    /// reserved patterns, and what cannot be held.
    func testFloatEncoding() {
        XCTAssertEqual(MedicalFloat.value(1).floatBits, 0x0000_0001)
        XCTAssertEqual(MedicalFloat.value(0).floatBits, 0)
        XCTAssertEqual(MedicalFloat.value(98).floatBits, 0x0000_0062)
        XCTAssertEqual(MedicalFloat.value(0.01).floatBits, 0xFE00_0001)
        XCTAssertEqual(MedicalFloat.value(1.612).floatBits, 0xFD00_064C)
        XCTAssertEqual(MedicalFloat.value(-5.5).floatBits, 0xFFFF_FFC9)
        XCTAssertEqual(MedicalFloat.value(86_400).floatBits, 0x0200_0360)
        XCTAssertEqual(MedicalFloat.float(MedicalFloat.value(1.0 / 3).floatBits).number, 0.333_333_3)
        XCTAssertEqual(MedicalFloat.value(.nan).floatBits, 0x007F_FFFF)
        XCTAssertEqual(MedicalFloat.value(1e40).floatBits, 0x007F_FFFE)
        XCTAssertEqual(MedicalFloat.value(-.infinity).floatBits, 0x0080_0002)
        for special in [MedicalFloat.notANumber, .notAtThisResolution, .positiveInfinity, .negativeInfinity, .reserved] {
            XCTAssertEqual(MedicalFloat.float(special.floatBits), special)
        }
        for number in [0.1, 2.5, 37.6, -40, 1e-6, 123_456, 8_388_605, 65_535.5] {
            XCTAssertEqual(MedicalFloat.float(MedicalFloat.value(number).floatBits), .value(number), "\(number)")
        }
    }

    /// Philips' `setValidRangeAndAccuracy` layout (type, unit, three FLOATs) with the range of
    /// ghs_app.c's `ValidRangeAccuracy` for SpO2: 0 to 100 %, accuracy 10.
    func testValidRangeAndAccuracy() throws {
        let bytes = hexBytes("B84B0200 2002 00000000 64000000 0A000000")
        XCTAssertEqual(
            try GHSValidRangeAndAccuracy.decode(bytes),
            GHSValidRangeAndAccuracy(
                type: 150_456, unit: 544, lowerLimit: .value(0), upperLimit: .value(100), accuracy: .value(10)))
        assertError(
            try GHSValidRangeAndAccuracy.decode(Array(bytes.dropLast())), .truncated, field: "accuracy",
            characteristic: .validRangeAndAccuracy)
        assertError(
            try GHSValidRangeAndAccuracy.decode(bytes + [0]), .unexpectedLength, field: "value",
            characteristic: .validRangeAndAccuracy)
    }

    /// Philips' `securtyLevelsByteArray`, 01 04: mode 1, level 4.
    func testSecurityLevels() throws {
        XCTAssertEqual(try GHSSecurityLevel.decodeList([0x01, 0x04]), [GHSSecurityLevel(mode: 1, level: 4)])
        XCTAssertEqual(
            try GHSSecurityLevel.decodeList([0x01, 0x04, 0x01, 0x03]),
            [GHSSecurityLevel(mode: 1, level: 4), GHSSecurityLevel(mode: 1, level: 3)])
        assertError(
            try GHSSecurityLevel.decodeList([0x01, 0x04, 0x01]), .oddLength, field: "level", characteristic: .securityLevels)
        assertError(try GHSSecurityLevel.decodeList([]), .truncated, field: "mode", characteristic: .securityLevels)
    }

    /// ghs_cp.h and Philips' `GhsControlPointHandler`: requests 0x01 and 0x02, responses
    /// 0x80–0x82.
    func testControlPoint() throws {
        XCTAssertEqual(GHSControlPoint.Request.startSendingLiveObservations.encoded, [0x01])
        XCTAssertEqual(GHSControlPoint.Request.stopSendingLiveObservations.encoded, [0x02])
        XCTAssertEqual(try GHSControlPoint.response([0x80]), .success)
        XCTAssertEqual(try GHSControlPoint.response([0x81]), .serverBusy)
        XCTAssertEqual(try GHSControlPoint.response([0x82]), .errorInLiveObservations)
        assertError(try GHSControlPoint.response([0x83]), .reservedValue, field: "opCode", characteristic: .controlPoint)
        assertError(try GHSControlPoint.response([]), .truncated, field: "opCode", characteristic: .controlPoint)
        assertError(try GHSControlPoint.response([0x80, 0x00]), .unexpectedLength, field: "value", characteristic: .controlPoint)
    }

    /// The requests as ghs_racp.c checks their lengths (2 bytes without an operand, 7 with a
    /// record number) and the indications both sensors send, null operator included.
    func testRecordAccessControlPoint() throws {
        typealias RACP = GHSRecordAccessControlPoint
        XCTAssertEqual(RACP.Request.reportRecords(.all).encoded, [0x01, 0x01])
        XCTAssertEqual(RACP.Request.reportRecords(.from(recordNumber: 5)).encoded, hexBytes("01 03 01 05000000"))
        XCTAssertEqual(RACP.Request.reportNumberOfRecords(.all).encoded, [0x04, 0x01])
        XCTAssertEqual(
            RACP.Request.reportNumberOfRecords(.from(recordNumber: 0x0102_0304)).encoded, hexBytes("04 03 01 04030201"))
        XCTAssertEqual(RACP.Request.deleteRecords(.all).encoded, [0x02, 0x01])
        XCTAssertEqual(RACP.Request.deleteRecords(.through(recordNumber: 9)).encoded, hexBytes("02 02 01 09000000"))
        XCTAssertEqual(RACP.Request.abort.encoded, [0x03, 0x00])
        XCTAssertEqual(RACP.Request.combinedReport(.from(recordNumber: 1)).encoded, hexBytes("07 03 01 01000000"))
        XCTAssertEqual(RACP.Request.reportRecords(.from(recordNumber: 12)).summary, "report the records from record 12")

        XCTAssertEqual(try RACP.indication(hexBytes("05 00 03000000")), .numberOfRecords(3))
        XCTAssertEqual(try RACP.indication(hexBytes("06 00 01 01")), .response(request: 0x01, code: .success))
        XCTAssertEqual(try RACP.indication(hexBytes("06 00 07 06")), .response(request: 0x07, code: .noRecordsFound))
        XCTAssertEqual(try RACP.indication(hexBytes("08 00 05000000")), .combinedReportResponse(recordsSent: 5))
        XCTAssertEqual(try RACP.indication(hexBytes("06 00 01 0A")).description, "op code 0x1: serverBusy")
        XCTAssertEqual(try RACP.indication(hexBytes("08 00 01000000")).description, "combined report sent 1 record")
        XCTAssertEqual(RACP.ResponseCode(rawValue: 0x20).name, "responseCode32")
        XCTAssertEqual(RACP.ResponseCode.noRecordsFound.name, "noRecordsFound")
        XCTAssertEqual(RACP.ResponseCode.operandNotSupported.name, "operandNotSupported")
        assertError(
            try RACP.indication(hexBytes("01 01")), .reservedValue, field: "opCode", characteristic: .recordAccessControlPoint)
        assertError(
            try RACP.indication(hexBytes("06 01 01 01")), .reservedValue, field: "operator",
            characteristic: .recordAccessControlPoint)
        assertError(
            try RACP.indication(hexBytes("05 00 0300")), .truncated, field: "numberOfRecords",
            characteristic: .recordAccessControlPoint)
        assertError(
            try RACP.indication(hexBytes("06 00 01 01 00")), .unexpectedLength, field: "value",
            characteristic: .recordAccessControlPoint)
    }

    private func assertError<Value>(
        _ body: @autoclosure () throws -> Value, _ code: GHSDecodingError.Code, field: String, characteristic: GHSCharacteristic,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard let error = error as? GHSDecodingError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
            XCTAssertEqual(error.field, field, "\(error)", file: file, line: line)
            XCTAssertEqual(error.characteristic, characteristic, file: file, line: line)
        }
    }
}
