import BLETesting
import Foundation
import GatewayTesting
import HealthDevices
import HealthModel
import HealthStore
import SQLiteStore
import XCTest

/// Decoded measurements to records: BMI from the profile's height, the blood-pressure
/// correlation, corrected times, and sync identifiers that make a record downloaded twice one
/// stored record.
final class ClinicalRecordMapperTests: XCTestCase {
    let scale = Device(name: "Scale", localIdentifier: "C0:11:22:33:44:55")
    let received = Date(timeIntervalSince1970: 1_795_000_000)
    var mapper: ClinicalRecordMapper { ClinicalRecordMapper(ids: SampleIDGenerator(seed: 16, milliseconds: { 1_795_000_000_000 })) }

    func quantities(_ records: [HealthRecord]) -> [QuantitySample] {
        records.compactMap { if case .quantity(let sample) = $0 { sample } else { nil } }
    }

    func testBodyMassIndexFromTheProfileHeightWhenTheScaleSendsNone() throws {
        // 0x3610 = 13840 × 0.005 kg = 69.2 kg, no BMI, no height.
        let weighing = try WeightMeasurementDecoder.decode([0x00, 0x10, 0x36])
        let records = try mapper.records(weighing, .init(device: scale, receivedAt: received, profileHeight: 1.72))
        let samples = quantities(records)
        XCTAssertEqual(samples.map(\.type), [.bodyMass, .bodyMassIndex])
        XCTAssertEqual(samples[0].quantity, Quantity(69.2, .kilogram))
        XCTAssertEqual(samples[1].quantity.value, 69.2 / (1.72 * 1.72), accuracy: 1e-12)
        XCTAssertEqual(samples[1].metadata[ClinicalRecordMapper.bmiComputedKey], .bool(true))
        XCTAssertEqual(samples[0].startDate, received, "no device time: the time of reception")
        XCTAssertEqual(Set(samples.map { $0.metadata[.mdcDeviceSpecializations] }), [.string("4111:1")], "MDC_DEV_SPEC_PROFILE_SCALE")
        XCTAssertNil(samples[0].syncIdentifier, "a live reading without a time stamp is not a stored record")
        // Without a profile height there is no BMI; an unsuccessful weighing gives nothing.
        XCTAssertEqual(quantities(try mapper.records(weighing, .init(device: scale, receivedAt: received))).map(\.type), [.bodyMass])
        XCTAssertEqual(try mapper.records(try WeightMeasurementDecoder.decode([0x00, 0xFF, 0xFF]), .init(device: scale, receivedAt: received)), [])
    }

    func testAScaleThatSendsBMIAndHeightKeepsThem() throws {
        let weighing = try WeightMeasurementDecoder.decode([0x0C, 0x10, 0x36, 0x02, 0xF1, 0x00, 0xB8, 0x06])
        let samples = quantities(try mapper.records(weighing, .init(device: scale, receivedAt: received, profileHeight: 1.9)))
        XCTAssertEqual(samples.map(\.type), [.bodyMass, .bodyMassIndex, .height])
        XCTAssertEqual(samples[1].quantity.value, 24.1, accuracy: 1e-12)
        XCTAssertNil(samples[1].metadata[ClinicalRecordMapper.bmiComputedKey])
        XCTAssertEqual(samples[2].quantity.value, 1.72, accuracy: 1e-12)
        XCTAssertEqual(samples[0].metadata[ClinicalRecordMapper.userIndexKey], .integer(2))
    }

    /// Body composition: fat percentage, lean body mass (fat free mass), body mass, height and a
    /// BMI from the weight and height of the record; the other fields as metadata; a sync
    /// identifier per sample from the time stamp and user.
    func testBodyCompositionGivesFatLeanMassWeightHeightAndBMI() throws {
        // eisaev/blevalueparser FeaturesAll_SinglePacket_ReservedOdd, every field.
        let record = try BodyCompositionMeasurementDecoder.decode(
            hexBytes("FEAF1234E7070206121C002A23453456456756786789789A89AB9ABCABCD"))
        let context = ClinicalRecordMapper.Context(device: scale, receivedAt: received, deviceClockOffset: -30, profileHeight: 1.9)
        let samples = quantities(try mapper.records(record, context))
        XCTAssertEqual(samples.map(\.type), [.bodyFatPercentage, .leanBodyMass, .bodyMass, .bodyMassIndex, .height])
        XCTAssertEqual(Set(samples.map { $0.metadata[.mdcDeviceSpecializations] }), [.string("4116:1")], "MDC_DEV_SPEC_PROFILE_BCA")
        XCTAssertEqual(samples[0].quantity, Quantity(1333, .percent))
        XCTAssertEqual(samples[1].quantity.value, 154.03, accuracy: 1e-9)
        XCTAssertEqual(samples[2].quantity.value, 241.41, accuracy: 1e-9)
        XCTAssertEqual(samples[3].quantity.value, 241.41 / (52.651 * 52.651), accuracy: 1e-12, "the record's height, not the profile's")
        XCTAssertNil(samples[3].metadata[ClinicalRecordMapper.bmiComputedKey])
        XCTAssertEqual(samples[4].quantity.value, 52.651, accuracy: 1e-12)
        let metadata = samples[0].metadata
        XCTAssertEqual(metadata[ClinicalRecordMapper.userIndexKey], .integer(42))
        XCTAssertEqual(metadata[ClinicalRecordMapper.basalMetabolismKey], .integer(17699))
        XCTAssertEqual(metadata[ClinicalRecordMapper.musclePercentageKey], .double(2206.8))
        XCTAssertEqual(metadata[ClinicalRecordMapper.muscleMassKey], .double(132.185))
        XCTAssertEqual(metadata[ClinicalRecordMapper.softLeanMassKey], .double(175.875))
        XCTAssertEqual(metadata[ClinicalRecordMapper.bodyWaterMassKey], .double(197.72))
        XCTAssertEqual(metadata[ClinicalRecordMapper.impedanceKey], .double(4391.3))
        // 2023-02-06T18:28:00 on the device clock, which runs 30 s fast.
        XCTAssertEqual(samples[0].startDate, Date(timeIntervalSince1970: 1_675_708_080 - 30))
        XCTAssertEqual(
            samples.map(\.syncIdentifier),
            ["bodyFatPercentage", "leanBodyMass", "bodyMass", "bodyMassIndex", "height"].map {
                "C0:11:22:33:44:55/bodyComposition/2023-02-06T18:28:00-00:00/42/\($0)"
            })
    }

    func testBodyCompositionBMIFromTheProfileHeightAndAnUnsuccessfulMeasurement() throws {
        // flags 0x0400 (weight): body fat 22.4 %, 72.4 kg.
        let record = try BodyCompositionMeasurementDecoder.decode([0x00, 0x04, 0xE0, 0x00, 0x90, 0x38])
        let samples = quantities(try mapper.records(record, .init(device: scale, receivedAt: received, profileHeight: 1.74)))
        XCTAssertEqual(samples.map(\.type), [.bodyFatPercentage, .bodyMass, .bodyMassIndex])
        XCTAssertEqual(samples[2].quantity.value, 72.4 / (1.74 * 1.74), accuracy: 1e-12)
        XCTAssertEqual(samples[2].metadata[ClinicalRecordMapper.bmiComputedKey], .bool(true))
        XCTAssertEqual(samples[0].startDate, received)
        XCTAssertNil(samples[0].syncIdentifier)
        let unsuccessful = try BodyCompositionMeasurementDecoder.decode(hexBytes("0000FFFF"))
        XCTAssertEqual(try mapper.records(unsuccessful, .init(device: scale, receivedAt: received, profileHeight: 1.74)), [])
    }

    func testBloodPressureIsACorrelationPlusHeartRateAtTheCorrectedDeviceTime() throws {
        // Nordic's "some" vector: kPa, pulse 60, status; plus a time stamp: 2026-11-23 06:30:09.
        let cuff = Device(name: "Cuff", localIdentifier: "00:5F:BF:12:34:56")
        let reading = try BloodPressureMeasurementDecoder.decode(
            [0x17, 0xBD, 0xF0, 0x0B, 0x00, 0x9F, 0xF0, 0xEA, 0x07, 0x0B, 0x17, 0x06, 0x1E, 0x09, 0x3C, 0x00, 0x12, 0x00])
        // The device clock is 90 s behind the gateway's, read as if UTC.
        let context = ClinicalRecordMapper.Context(device: cuff, receivedAt: received, deviceClockOffset: 90)
        let records = try mapper.records(reading, context)
        XCTAssertEqual(records.map(\.kind), [.correlation, .quantity])
        guard case .correlation(let pressure) = records[0], case .quantity(let pulse) = records[1] else { return XCTFail("\(records)") }
        XCTAssertEqual(pressure.type, .bloodPressure)
        XCTAssertEqual(pressure.objects[0].quantity.value, 18.9 * 1000 / 133.322387415, accuracy: 1e-9)
        XCTAssertEqual(pressure.objects[1].quantity.value, 11 * 1000 / 133.322387415, accuracy: 1e-9)
        let expected = Date(timeIntervalSince1970: 1_795_415_409 + 90)
        XCTAssertEqual(pressure.startDate, expected, "2026-11-23T06:30:09 on the device, + 90 s")
        XCTAssertEqual(pressure.metadata[ClinicalRecordMapper.clockOffsetKey], .double(90))
        XCTAssertEqual(pressure.metadata[ClinicalRecordMapper.deviceTimestampKey], .string("2026-11-23T06:30:09-00:00"))
        XCTAssertEqual(pressure.syncIdentifier, "00:5F:BF:12:34:56/bloodPressure/2026-11-23T06:30:09-00:00/255")
        XCTAssertEqual(pulse.type, .heartRate)
        XCTAssertEqual([pressure.metadata, pulse.metadata].map { $0[.mdcDeviceSpecializations] }, [.string("4103:1"), .string("4103:1")])
        XCTAssertEqual(pulse.quantity.value, 60)
        XCTAssertEqual(pulse.syncIdentifier, "00:5F:BF:12:34:56/bloodPressure/2026-11-23T06:30:09-00:00/255/heartRate")
        // The same reading mapped again (another download) keeps every uuid: the correlation's,
        // its two members' (distinct, derived from the correlation's) and the pulse's.
        let again = try ClinicalRecordMapper(ids: SampleIDGenerator(seed: 5)).records(reading, context)
        XCTAssertEqual(again.map(\.id), records.map(\.id))
        guard case .correlation(let pressureAgain) = again[0] else { return XCTFail("\(again)") }
        XCTAssertEqual(pressureAgain.objects.map(\.id), pressure.objects.map(\.id))
        XCTAssertEqual(Set(pressure.objects.map(\.id) + [pressure.id, pulse.id]).count, 4)
        // A NaN systolic pressure cannot make a correlation: only the pulse remains.
        let broken = try BloodPressureMeasurementDecoder.decode([0x04, 0xFF, 0x07, 0x50, 0x00, 0x5D, 0x00, 0x3C, 0x00])
        XCTAssertEqual(try mapper.records(broken, context).map(\.kind), [.quantity])
    }

    func testAGlucoseRecordDownloadedTwiceIsStoredOnce() async throws {
        // Sequence 7, 5.5 mmol/L (55 × 10^-4 mol/L), capillary whole blood from a finger.
        let meter = Device(name: "Meter", localIdentifier: "D0:00:00:00:00:07")
        let payload: [UInt8] = [0x06, 0x07, 0x00, 0xEA, 0x07, 0x0B, 0x17, 0x06, 0x1E, 0x09, 0x37, 0xC0, 0x11]
        let first = try mapper.records(try GlucoseMeasurementDecoder.decode(payload), .init(device: meter, receivedAt: received))
        let again = try ClinicalRecordMapper(ids: SampleIDGenerator(seed: 99)).records(
            try GlucoseMeasurementDecoder.decode(payload), .init(device: meter, receivedAt: received.addingTimeInterval(3600)))
        let sample = try XCTUnwrap(quantities(first).first)
        XCTAssertEqual(sample.quantity.unit, .millimolePerLiterOfGlucose)
        XCTAssertEqual(sample.quantity.value, 5.5, accuracy: 1e-12)
        XCTAssertEqual(sample.canonicalValue, 5.5 * 18.015588000005408, accuracy: 1e-9)
        XCTAssertEqual(sample.syncIdentifier, "D0:00:00:00:00:07/bloodGlucose/7")
        XCTAssertEqual(sample.metadata[ClinicalRecordMapper.sampleLocationKey], .string("finger"))
        XCTAssertEqual(sample.metadata[.mdcDeviceSpecializations], .string(MDCDeviceSpecialization.glucoseMeter.listed))
        XCTAssertEqual(first.map(\.id), again.map(\.id), "the uuid comes from the sync identifier: every repository sees one record")
        XCTAssertEqual(sample.id, SampleID(syncIdentifier: "D0:00:00:00:00:07/bloodGlucose/7", version: 1))
        let other = try mapper.records(
            try GlucoseMeasurementDecoder.decode([0x06, 0x08] + payload.dropFirst(2)), .init(device: meter, receivedAt: received))
        XCTAssertNotEqual(other.map(\.id), first.map(\.id), "sequence number 8 is another record")

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("clinical-mapper-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try HealthStore(path: directory.appendingPathComponent("store.sqlite").path)
        let firstSummary = try await writer.write(first)
        XCTAssertEqual(firstSummary.inserted, 1)
        let againSummary = try await writer.write(again)
        XCTAssertEqual(againSummary.ignored, 1, "the same sequence number from the same meter")
    }

    func testSpecialValuesNeverBecomeSamples() throws {
        let nanTemperature = try TemperatureMeasurementDecoder.decode([0x00, 0xFF, 0xFF, 0x7F, 0x00])
        XCTAssertEqual(try mapper.records(nanTemperature, .init(device: scale, receivedAt: received)), [])
        let fahrenheit = try TemperatureMeasurementDecoder.decode([0x05, 0xDA, 0x03, 0x00, 0xFF, 0x03])  // 98.6 degF, ear
        let samples = quantities(try mapper.records(fahrenheit, .init(device: scale, receivedAt: received)))
        XCTAssertEqual(samples.first?.quantity.value ?? 0, 37, accuracy: 1e-9)
        XCTAssertEqual(samples.first?.metadata[ClinicalRecordMapper.temperatureTypeKey], .string("ear"))
        XCTAssertEqual(samples.first?.metadata[.mdcDeviceSpecializations], .string("4104:1"), "MDC_DEV_SPEC_PROFILE_TEMP")
        // SpO2 97 %, pulse NRes, index 4.5 %.
        let oximeter = try PLXMeasurementDecoder.decodeSpotCheck([0x08, 0x61, 0x00, 0x00, 0x08, 0x2D, 0xF0])
        let plx = quantities(try mapper.records(oximeter, .init(device: scale, receivedAt: received)))
        XCTAssertEqual(plx.map(\.type), [.oxygenSaturation, .peripheralPerfusionIndex])
        XCTAssertEqual(Set(plx.map { $0.metadata[.mdcDeviceSpecializations] }), [.string("4100:1")], "MDC_DEV_SPEC_PROFILE_PULS_OXIM")
    }
}
