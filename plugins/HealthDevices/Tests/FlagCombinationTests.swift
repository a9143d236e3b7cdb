import GATTDecoding
import HealthDevices
import XCTest

/// Every combination of each characteristic's flag bits: payloads built from the layout, each
/// field present exactly when its bit is set, decoded to the values written.
final class FlagCombinationTests: XCTestCase {
    let stamp: [UInt8] = [0xEA, 0x07, 0x0B, 0x17, 0x06, 0x1E, 0x09]  // 2026-11-23 06:30:09

    func testEveryWeightMeasurementFlagCombination() throws {
        for flags in UInt8(0)..<16 {
            var payload: [UInt8] = [flags, 0x10, 0x36]  // 0x3610 = 13840 units
            if flags & 0x02 != 0 { payload += stamp }
            if flags & 0x04 != 0 { payload += [0x03] }
            if flags & 0x08 != 0 { payload += [0xF1, 0x00, 0xB8, 0x06] }  // BMI 241 × 0.1; height 1720 units
            let m = try WeightMeasurementDecoder.decode(payload)
            let imperial = flags & 0x01 != 0
            XCTAssertEqual(m.weight ?? 0, imperial ? 138.40 * 0.45359237 : 69.2, accuracy: 1e-9, "flags \(flags)")
            XCTAssertEqual(m.timestamp?.rfc3339, flags & 0x02 != 0 ? "2026-11-23T06:30:09-00:00" : nil)
            XCTAssertEqual(m.userID, flags & 0x04 != 0 ? 3 : nil)
            XCTAssertEqual(m.bmi, flags & 0x08 != 0 ? 24.1 : nil)
            if flags & 0x08 != 0 {
                XCTAssertEqual(m.height ?? 0, imperial ? 172.0 * 0.0254 : 1.72, accuracy: 1e-9)
            } else {
                XCTAssertNil(m.height)
            }
            XCTAssertThrowsError(try WeightMeasurementDecoder.decode(Array(payload.dropLast())), "flags \(flags) cut")
        }
        XCTAssertNil(try WeightMeasurementDecoder.decode([0x04, 0x10, 0x36, 0xFF]).userID, "0xFF is the unknown user")
    }

    /// Bits 0–12 (reserved bits 13–15 set too, to be ignored), each optional field with its
    /// own value.
    func testEveryBodyCompositionFlagCombination() throws {
        let values: [UInt16] = [1500, 412, 300, 9000, 11000, 8000, 7000, 14480]  // bits 3–10
        for flags in UInt16(0)..<0x2000 {
            var payload = [UInt8(flags & 0xFF), UInt8((flags | 0xE000) >> 8), 0xE0, 0x00]  // body fat 22.4 %
            if flags & 0x02 != 0 { payload += stamp }
            if flags & 0x04 != 0 { payload += [0x03] }
            for (bit, value) in values.enumerated() where flags & (0x08 << UInt16(bit)) != 0 {
                payload += [UInt8(value & 0xFF), UInt8(value >> 8)]
            }
            if flags & 0x800 != 0 { payload += [0xB8, 0x06] }  // 1720 units
            let m = try BodyCompositionMeasurementDecoder.decode(payload)
            let imperial = flags & 0x01 != 0
            func mass(_ raw: UInt16) -> Double { imperial ? Double(raw) / 100 * 0.45359237 : Double(raw) / 200 }
            XCTAssertEqual(m.bodyFatPercentage, 22.4, "flags \(flags)")
            XCTAssertEqual(m.imperial, imperial)
            XCTAssertEqual(m.isMultiplePacket, flags & 0x1000 != 0)
            XCTAssertEqual(m.timestamp?.rfc3339, flags & 0x02 != 0 ? "2026-11-23T06:30:09-00:00" : nil)
            XCTAssertEqual(m.userID, flags & 0x04 != 0 ? 3 : nil)
            XCTAssertEqual(m.basalMetabolism, flags & 0x08 != 0 ? 1500 : nil)
            XCTAssertEqual(m.musclePercentage, flags & 0x10 != 0 ? 41.2 : nil)
            XCTAssertEqual(m.muscleMass, flags & 0x20 != 0 ? mass(300) : nil)
            XCTAssertEqual(m.fatFreeMass, flags & 0x40 != 0 ? mass(9000) : nil)
            XCTAssertEqual(m.softLeanMass, flags & 0x80 != 0 ? mass(11000) : nil)
            XCTAssertEqual(m.bodyWaterMass, flags & 0x100 != 0 ? mass(8000) : nil)
            XCTAssertEqual(m.impedance, flags & 0x200 != 0 ? 700 : nil)
            XCTAssertEqual(m.weight, flags & 0x400 != 0 ? mass(14480) : nil)
            if flags & 0x800 != 0 {
                XCTAssertEqual(m.height ?? 0, imperial ? 172.0 * 0.0254 : 1.72, accuracy: 1e-9)
            } else {
                XCTAssertNil(m.height)
            }
            XCTAssertThrowsError(try BodyCompositionMeasurementDecoder.decode(Array(payload.dropLast())), "flags \(flags) cut")
        }
        XCTAssertNil(try BodyCompositionMeasurementDecoder.decode([0x04, 0x00, 0xE0, 0x00, 0xFF]).userID, "0xFF is the unknown user")
        XCTAssertNil(try BodyCompositionMeasurementDecoder.decode([0x00, 0x00, 0xFF, 0xFF]).bodyFatPercentage, "unsuccessful")
    }

    func testEveryBloodPressureFlagCombination() throws {
        for flags in UInt8(0)..<32 {
            var payload: [UInt8] = [flags, 0x79, 0x00, 0x4F, 0x00, 0x5D, 0x00]  // 121, 79, 93
            if flags & 0x02 != 0 { payload += stamp }
            if flags & 0x04 != 0 { payload += [0x48, 0x00] }
            if flags & 0x08 != 0 { payload += [0x02] }
            if flags & 0x10 != 0 { payload += [0x04, 0x00] }
            let m = try BloodPressureMeasurementDecoder.decode(payload)
            let factor = flags & 0x01 != 0 ? 1000 / 133.322387415 : 1
            XCTAssertEqual(m.millimetersOfMercury(m.systolic) ?? 0, 121 * factor, accuracy: 1e-9, "flags \(flags)")
            XCTAssertEqual(m.millimetersOfMercury(m.diastolic) ?? 0, 79 * factor, accuracy: 1e-9)
            XCTAssertEqual(m.millimetersOfMercury(m.meanArterialPressure) ?? 0, 93 * factor, accuracy: 1e-9)
            XCTAssertEqual(m.timestamp?.rfc3339, flags & 0x02 != 0 ? "2026-11-23T06:30:09-00:00" : nil)
            XCTAssertEqual(m.pulseRate, flags & 0x04 != 0 ? .value(72) : nil)
            XCTAssertEqual(m.userID, flags & 0x08 != 0 ? 2 : nil)
            XCTAssertEqual(m.measurementStatus, flags & 0x10 != 0 ? 4 : nil)
            XCTAssertThrowsError(try BloodPressureMeasurementDecoder.decode(Array(payload.dropLast())), "flags \(flags) cut")
        }
    }

    func testEveryTemperatureFlagCombination() throws {
        for flags in UInt8(0)..<8 {
            var payload: [UInt8] = [flags, 0x6E, 0x01, 0x00, 0xFF]  // 366 × 10^-1
            if flags & 0x02 != 0 { payload += stamp }
            if flags & 0x04 != 0 { payload += [0x06] }
            let m = try TemperatureMeasurementDecoder.decode(payload)
            XCTAssertEqual(m.celsius ?? 0, flags & 0x01 != 0 ? (36.6 - 32) * 5 / 9 : 36.6, accuracy: 1e-9)
            XCTAssertEqual(m.timestamp?.rfc3339, flags & 0x02 != 0 ? "2026-11-23T06:30:09-00:00" : nil)
            XCTAssertEqual(m.temperatureType, flags & 0x04 != 0 ? "mouth" : nil)
            XCTAssertThrowsError(try TemperatureMeasurementDecoder.decode(Array(payload.dropLast())), "flags \(flags) cut")
        }
        XCTAssertNil(try TemperatureMeasurementDecoder.decode([0x04, 0x6E, 0x01, 0x00, 0xFF, 0x0A]).temperatureType, "10 is reserved")
    }

    func testEveryGlucoseFlagCombination() throws {
        for flags in UInt8(0)..<32 {
            var payload: [UInt8] = [flags, 0x2A, 0x00] + stamp
            if flags & 0x01 != 0 { payload += [0x46, 0x00] }  // +70 min: crosses into the next hour
            if flags & 0x02 != 0 { payload += (flags & 0x04 != 0 ? [0x37, 0xC0] : [0x3E, 0xB0]) + [0x11] }
            if flags & 0x08 != 0 { payload += [0x01, 0x00] }
            let m = try GlucoseMeasurementDecoder.decode(payload)
            XCTAssertEqual(m.sequenceNumber, 42)
            XCTAssertEqual(m.timeOffset, flags & 0x01 != 0 ? 70 : nil)
            XCTAssertEqual(m.timestamp.rfc3339, flags & 0x01 != 0 ? "2026-11-23T07:40:09-00:00" : "2026-11-23T06:30:09-00:00")
            if flags & 0x02 != 0 {
                // 0xB03E: 62 × 10^-5 kg/L = 62 mg/dL; 0xC037: 55 × 10^-4 mol/L = 5.5 mmol/L.
                XCTAssertEqual(m.milligramsPerDeciliter ?? 0, flags & 0x04 != 0 ? 5.5 * 18.015588000005408 : 62, accuracy: 1e-9)
                XCTAssertEqual(m.type, "capillaryWholeBlood")
                XCTAssertEqual(m.sampleLocation, "finger")
            } else {
                XCTAssertNil(m.concentration)
            }
            XCTAssertEqual(m.sensorStatus, flags & 0x08 != 0 ? 1 : nil)
            XCTAssertEqual(m.contextFollows, flags & 0x10 != 0)
            XCTAssertThrowsError(try GlucoseMeasurementDecoder.decode(Array(payload.dropLast())), "flags \(flags) cut")
        }
    }

    func testTimeOffsetsCarryAcrossDaysAndYears() {
        let newYear = DeviceTimestamp(year: 2026, month: 12, day: 31, hours: 23, minutes: 50, seconds: 0)
        XCTAssertEqual(newYear.adding(minutes: 15).rfc3339, "2027-01-01T00:05:00-00:00")
        let leap = DeviceTimestamp(year: 2028, month: 3, day: 1, hours: 0, minutes: 10, seconds: 5)
        XCTAssertEqual(leap.adding(minutes: -20).rfc3339, "2028-02-29T23:50:05-00:00")
        XCTAssertEqual(leap.adding(minutes: -32768).rfc3339, "2028-02-07T06:02:05-00:00")
    }
}
