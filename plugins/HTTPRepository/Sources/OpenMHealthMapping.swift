import Foundation
import HealthModel
import SampleBus

/// Maps quantity samples to Open mHealth data points.
///
/// The header carries both the Open mHealth 1.x fields (`id`, `creation_date_time`,
/// `acquisition_provenance`) and the IEEE 1752.1 ones (`uuid`, `source_creation_date_time`,
/// `modality`), so it validates against either header schema. Bodies follow
/// omh:heart-rate:2.0, omh:step-count:3.0 and omh:physical-activity:1.2 (walking, running,
/// cycling and rowing distance, its activity named); other types (speeds, cadence, power) have
/// no Open mHealth schema and are not accepted by the sink in this format.
enum OpenMHealthMapping {
    struct Schema {
        var name: String
        var version: String
    }

    static func schema(for type: QuantityType) -> Schema? {
        switch type.identifier {
        case QuantityType.heartRate.identifier: Schema(name: "heart-rate", version: "2.0")
        case QuantityType.stepCount.identifier: Schema(name: "step-count", version: "3.0")
        case QuantityType.distanceWalkingRunning.identifier, QuantityType.distanceCycling.identifier,
            QuantityType.distanceRowing.identifier:
            Schema(name: "physical-activity", version: "1.2")
        default: nil
        }
    }

    /// physical-activity's `activity_name` for a distance type.
    static func activityName(for type: QuantityType) -> String {
        switch type.identifier {
        case QuantityType.distanceCycling.identifier: "cycling"
        case QuantityType.distanceRowing.identifier: "rowing"
        default: "walking or running"
        }
    }

    static func dataPoint(_ sample: QuantitySample, created: Date) -> JSONValue {
        let schema = schema(for: sample.type) ?? Schema(name: sample.type.identifier, version: "1.0")
        let uuid = sample.id.uuidString
        let sourceCreated = RFC3339.string(from: sample.endDate)
        var provenance: [String: JSONValue] = [
            "source_name": .string(sourceName(sample.device)),
            "modality": .string("sensed"),
            "source_creation_date_time": .string(sourceCreated),
        ]
        if let device = sample.device, let identifier = device.localIdentifier {
            provenance["device_identifier"] = .string(identifier)
        }
        let header: JSONValue = .object([
            "id": .string(uuid),
            "uuid": .string(uuid),
            "creation_date_time": .string(RFC3339.string(from: created)),
            "source_creation_date_time": .string(sourceCreated),
            "schema_id": .object([
                "namespace": .string("omh"), "name": .string(schema.name), "version": .string(schema.version),
            ]),
            "modality": .string("sensed"),
            "acquisition_provenance": .object(provenance),
        ])
        return .object(["header": header, "body": body(sample)])
    }

    static func body(_ sample: QuantitySample) -> JSONValue {
        let interval: JSONValue = .object(["time_interval": .object([
            "start_date_time": .string(RFC3339.string(from: sample.startDate)),
            "end_date_time": .string(RFC3339.string(from: sample.endDate)),
        ])])
        let frame: JSONValue = sample.startDate == sample.endDate
            ? .object(["date_time": .string(RFC3339.string(from: sample.startDate))]) : interval
        switch sample.type.identifier {
        case QuantityType.heartRate.identifier:
            return .object([
                "heart_rate": .object(["value": .number(sample.canonicalValue), "unit": .string("beats/min")]),
                "effective_time_frame": frame,
            ])
        case QuantityType.stepCount.identifier:
            // step-count 3.0 requires a time interval, even for an instant count.
            return .object([
                "step_count": .object(["value": .number(sample.canonicalValue), "unit": .string("steps")]),
                "effective_time_frame": interval,
            ])
        default:
            return .object([
                "activity_name": .string(activityName(for: sample.type)),
                "distance": .object(["value": .number(sample.canonicalValue), "unit": .string("m")]),
                "effective_time_frame": frame,
            ])
        }
    }

    /// "Polar H10 (Polar Electro Oy)", the device name, or "healthgate".
    static func sourceName(_ device: Device?) -> String {
        guard let device else { return "healthgate" }
        let model = [device.manufacturer, device.model].compactMap { $0 }.joined(separator: " ")
        switch (device.name, model.isEmpty) {
        case (let name?, false) where name != model: return "\(name) (\(model))"
        case (let name?, _): return name
        case (nil, false): return model
        case (nil, true): return device.localIdentifier ?? "healthgate"
        }
    }
}
