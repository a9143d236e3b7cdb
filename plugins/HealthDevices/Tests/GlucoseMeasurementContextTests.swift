import BLETesting
import GATTDecoding
import GatewayTesting
import HealthDevices
import HealthModel
import XCTest

/// Glucose Measurement Context (0x2A34): the payloads of NordicSemiconductor/Android-BLE-Common-Library,
/// ble-common/src/test/java/no/nordicsemi/android/ble/common/callback/glucose/GlucoseMeasurementContextDataCallbackTest.java
/// (onGlucoseMeasurementContextReceived_empty, onInvalidDataReceived), every flag combination,
/// and the context joined to its measurement by sequence number.
final class GlucoseMeasurementContextTests: XCTestCase {
    func testPublishedVectors() throws {
        let empty = try GlucoseMeasurementContextDecoder.decode(hexBytes("0001000000000000000000000000000000"))
        XCTAssertEqual(empty.sequenceNumber, 1)
        XCTAssertNil(empty.meal)
        XCTAssertTrue(empty.metadata.isEmpty)
        XCTAssertThrowsError(try GlucoseMeasurementContextDecoder.decode(hexBytes("FF0000B303"))) {
            XCTAssertEqual("\($0)", "Glucose Measurement Context (0x2A34): field carbohydrate at offset 5 is truncated: needs 2 bytes, 0 available")
        }
    }

    func testEveryFlagCombination() throws {
        for flags in 0...255 {
            let f = UInt8(flags)
            var payload: [UInt8] = [f, 0x07, 0x00]
            if f & 0x80 != 0 { payload += [0x00] }
            if f & 0x01 != 0 { payload += [0x03, 0x32, 0xD0] }  // dinner, 50 × 10^-3 kg
            if f & 0x02 != 0 { payload += [0x01] }  // preprandial
            if f & 0x04 != 0 { payload += [0x21] }  // self, major health issues
            if f & 0x08 != 0 { payload += [0x58, 0x02, 0x32] }  // 600 s at 50 %
            if f & 0x10 != 0 { payload += [0x04, 0x0A, 0xA0] }  // long-acting insulin, 10 × 10^-6
            if f & 0x40 != 0 { payload += [0x41, 0xF0] }  // 6.5 %
            let c = try GlucoseMeasurementContextDecoder.decode(payload)
            XCTAssertEqual(c.sequenceNumber, 7)
            XCTAssertEqual(c.carbohydrateName, f & 0x01 != 0 ? "dinner" : nil, "flags \(flags)")
            XCTAssertEqual(c.meal, f & 0x02 != 0 ? "preprandial" : nil)
            XCTAssertEqual(c.tester, f & 0x04 != 0 ? "self" : nil)
            XCTAssertEqual(c.health, f & 0x04 != 0 ? "majorHealthIssues" : nil)
            XCTAssertEqual(c.exerciseDuration, f & 0x08 != 0 ? 600 : nil)
            XCTAssertEqual(c.exerciseIntensity, f & 0x08 != 0 ? 50 : nil)
            XCTAssertEqual(c.medicationName, f & 0x10 != 0 ? "longActingInsulin" : nil)
            XCTAssertEqual(c.hbA1c, f & 0x40 != 0 ? .value(6.5) : nil)
            if f & 0x10 != 0 {
                let key = MetadataKey(f & 0x20 != 0 ? "healthgate.glucoseContext.medicationMilliliters" : "healthgate.glucoseContext.medicationMilligrams")
                guard case .double(let amount)? = c.metadata[key] else { return XCTFail("flags \(flags): \(c.metadata)") }
                XCTAssertEqual(amount, f & 0x20 != 0 ? 0.01 : 10, accuracy: 1e-9, "10 × 10^-6 L or kg")
            }
            if payload.count > 3 {
                XCTAssertThrowsError(try GlucoseMeasurementContextDecoder.decode(Array(payload.dropLast())), "flags \(flags) cut")
            }
        }
    }

    func testTheContextJoinsItsMeasurementBySequenceNumber() throws {
        let meter = Device(name: "Meter", localIdentifier: "D0:00:00:00:00:07")
        let mapper = ClinicalRecordMapper(ids: SampleIDGenerator(seed: 34))
        let measurement = try GlucoseMeasurementDecoder.decode(
            [0x12, 0x07, 0x00, 0xEA, 0x07, 0x0B, 0x17, 0x06, 0x1E, 0x09, 0x3E, 0xB0, 0x11])  // 62 mg/dL, context follows
        XCTAssertTrue(measurement.contextFollows)
        let context = try GlucoseMeasurementContextDecoder.decode([0x06, 0x07, 0x00, 0x02, 0x21])
        let at = Date(timeIntervalSince1970: 1_795_000_000)
        let records = try mapper.records(measurement, .init(device: meter, receivedAt: at), measurementContext: context)
        guard case .quantity(let sample)? = records.first else { return XCTFail("\(records)") }
        XCTAssertEqual(sample.quantity, Quantity(62, .milligramPerDeciliter))
        XCTAssertEqual(sample.metadata[MetadataKey("healthgate.glucoseContext.meal")], .string("postprandial"))
        XCTAssertEqual(sample.metadata[MetadataKey("healthgate.glucoseContext.health")], .string("majorHealthIssues"))
        // Another record's context is not attached.
        let other = try GlucoseMeasurementContextDecoder.decode([0x02, 0x08, 0x00, 0x02])
        guard case .quantity(let plain)? = try mapper.records(measurement, .init(device: meter, receivedAt: at), measurementContext: other).first
        else { return XCTFail() }
        XCTAssertNil(plain.metadata[MetadataKey("healthgate.glucoseContext.meal")])
    }
}
