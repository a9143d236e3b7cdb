import Foundation
import HealthDevices
import HealthModel

/// The `health` target: every HealthDevices decoder (Weight, Blood Pressure and Intermediate Cuff
/// Pressure, Temperature, PLX Spot-check and Continuous, Glucose Measurement and Context), and
/// what decodes through the mapper to records and their HealthJSON.
enum HealthTarget {
    static func run(_ bytes: [UInt8]) {
        let context = ClinicalRecordMapper.Context(
            device: Device(name: "fuzz", localIdentifier: "00:00:00:00:00:01"),
            receivedAt: Date(timeIntervalSince1970: 1_800_000_000), deviceClockOffset: 3600, profileHeight: 1.7)
        let mapper = ClinicalRecordMapper(ids: SampleIDGenerator(seed: 1, milliseconds: { 1_800_000_000_000 }))
        var records: [HealthRecord] = []
        if let m = try? WeightMeasurementDecoder.decode(bytes) {
            check(m.report, bytes)
            records += (try? mapper.records(m, context)) ?? []
        }
        if let m = try? BloodPressureMeasurementDecoder.decode(bytes) {
            check(m.report, bytes)
            records += (try? mapper.records(m, context)) ?? []
        }
        _ = try? BloodPressureMeasurementDecoder.decode(bytes, as: .intermediateCuffPressure)
        if let m = try? TemperatureMeasurementDecoder.decode(bytes) {
            check(m.report, bytes)
            records += (try? mapper.records(m, context)) ?? []
        }
        for decoded in [try? PLXMeasurementDecoder.decodeSpotCheck(bytes), try? PLXMeasurementDecoder.decodeContinuous(bytes)] {
            guard let m = decoded else { continue }
            check(m.report, bytes)
            records += (try? mapper.records(m, context)) ?? []
        }
        let measurementContext = try? GlucoseMeasurementContextDecoder.decode(bytes)
        _ = measurementContext?.metadata
        if let m = try? GlucoseMeasurementDecoder.decode(bytes) {
            check(m.report, bytes)
            records += (try? mapper.records(m, context, measurementContext: measurementContext)) ?? []
        }
        // Whatever becomes a record holds finite numbers only and has a JSON form (a date from a
        // garbage time stamp may be outside RFC 3339's years: the encoder refuses it, it does not crash).
        let encoder = HealthJSON.makeEncoder()
        for record in records {
            if case .quantity(let sample) = record {
                FuzzTarget.check(sample.quantity.value.isFinite, "a non-finite sample from \(bytes)")
            }
            _ = try? encoder.encode(record)
        }
    }

    /// A report never holds a NaN or an infinity: special values print as null.
    static func check(_ report: MeasurementReport, _ bytes: [UInt8]) {
        for (key, value) in report.fields {
            if case .number(let number) = value {
                FuzzTarget.check(number.isFinite, "\(key) is \(number) for \(bytes)")
            }
        }
    }
}
