import BLETesting
import GATTDecoding
import GatewayTesting
import HealthDevices
import XCTest

/// PLX Continuous Measurement (0x2A5F) against the payloads of StanfordSpezi/SpeziBluetooth,
/// Tests/SpeziBluetoothServicesTests/PLXTests.swift (testVerySimpleMeasurementCoding,
/// testSimpleMeasurementCoding, testFullMeasurementCoding), and every flag combination of both
/// PLX characteristics.
final class PLXTests: XCTestCase {
    func testContinuousMeasurementVectors() throws {
        let simplest = try PLXMeasurementDecoder.decodeContinuous(hexBytes("006400 5A00"))
        XCTAssertEqual(simplest.oxygenSaturation, .value(100))
        XCTAssertEqual(simplest.pulseRate, .value(90))
        XCTAssertNil(simplest.measurementStatus)
        let simple = try PLXMeasurementDecoder.decodeContinuous(hexBytes("1C5F005A00200000000057F0"))
        XCTAssertEqual(simple.report["oxygenSaturation"], .number(95))
        XCTAssertEqual(simple.measurementStatus, 0x20)
        XCTAssertEqual(simple.deviceAndSensorStatus, 0)
        XCTAssertEqual(simple.pulseAmplitudeIndex?.number ?? 0, 8.7, accuracy: 1e-12)
        let full = try PLXMeasurementDecoder.decodeContinuous(hexBytes("1FDEF3CAF3CAF35AF5D4F3B2F220010000007AE3"))
        XCTAssertEqual(full.oxygenSaturation, .value(99))
        XCTAssertEqual(full.pulseRate, .value(97))
        XCTAssertEqual(full.fast?.oxygenSaturation, .value(97))
        XCTAssertEqual(full.fast?.pulseRate, .value(137))
        XCTAssertEqual(full.slow?.oxygenSaturation, .value(98))
        XCTAssertEqual(full.slow?.pulseRate, .value(69))
        XCTAssertEqual(full.measurementStatus, 0x0120)
        XCTAssertEqual(full.pulseAmplitudeIndex?.number ?? 0, 8.9, accuracy: 1e-12)
        XCTAssertThrowsError(try PLXMeasurementDecoder.decodeContinuous(hexBytes("1FDEF3CAF3CAF35AF5D4F3"))) {
            XCTAssertEqual("\($0)", "PLX Continuous Measurement (0x2A5F): field pulseRateSlow at offset 11 is truncated: needs 2 bytes, 0 available")
        }
    }

    func testEverySpotCheckFlagCombination() throws {
        for flags in UInt8(0)..<32 {
            var payload: [UInt8] = [flags, 0x61, 0x00, 0x48, 0x00]  // SpO2 97, pulse 72
            if flags & 0x01 != 0 { payload += [0xEA, 0x07, 0x0B, 0x17, 0x06, 0x1E, 0x09] }
            if flags & 0x02 != 0 { payload += [0x20, 0x00] }
            if flags & 0x04 != 0 { payload += [0x01, 0x02, 0x03] }
            if flags & 0x08 != 0 { payload += [0x2D, 0xF0] }  // 4.5 %
            let m = try PLXMeasurementDecoder.decodeSpotCheck(payload)
            XCTAssertEqual(m.oxygenSaturation, .value(97))
            XCTAssertEqual(m.pulseRate, .value(72))
            let stamped = flags & 0x01 != 0 && flags & 0x10 == 0
            XCTAssertEqual(m.report["timestamp"], stamped ? .string("2026-11-23T06:30:09-00:00") : .null, "flags \(flags)")
            XCTAssertEqual(m.measurementStatus, flags & 0x02 != 0 ? 0x20 : nil)
            XCTAssertEqual(m.deviceAndSensorStatus, flags & 0x04 != 0 ? 0x030201 : nil)
            XCTAssertEqual(m.pulseAmplitudeIndex, flags & 0x08 != 0 ? .value(4.5) : nil)
            if payload.count > 5 {
                XCTAssertThrowsError(try PLXMeasurementDecoder.decodeSpotCheck(Array(payload.dropLast())), "flags \(flags) cut")
            }
        }
    }

    func testEveryContinuousFlagCombination() throws {
        for flags in UInt8(0)..<32 {
            var payload: [UInt8] = [flags, 0x61, 0x00, 0x48, 0x00]
            if flags & 0x01 != 0 { payload += [0x60, 0x00, 0x4A, 0x00] }
            if flags & 0x02 != 0 { payload += [0x62, 0x00, 0x46, 0x00] }
            if flags & 0x04 != 0 { payload += [0x20, 0x00] }
            if flags & 0x08 != 0 { payload += [0x01, 0x02, 0x03] }
            if flags & 0x10 != 0 { payload += [0xFF, 0x07] }  // NaN index
            let m = try PLXMeasurementDecoder.decodeContinuous(payload)
            XCTAssertEqual(m.fast?.oxygenSaturation, flags & 0x01 != 0 ? .value(96) : nil, "flags \(flags)")
            XCTAssertEqual(m.slow?.pulseRate, flags & 0x02 != 0 ? .value(70) : nil)
            XCTAssertEqual(m.measurementStatus, flags & 0x04 != 0 ? 0x20 : nil)
            XCTAssertEqual(m.deviceAndSensorStatus, flags & 0x08 != 0 ? 0x030201 : nil)
            XCTAssertEqual(m.pulseAmplitudeIndex, flags & 0x10 != 0 ? .notANumber : nil)
            XCTAssertEqual(m.report["pulseAmplitudeIndex"], .null, "NaN or absent prints as null")
            if payload.count > 5 {
                XCTAssertThrowsError(try PLXMeasurementDecoder.decodeContinuous(Array(payload.dropLast())), "flags \(flags) cut")
            }
        }
    }
}
