import FoundationEssentials
import HealthModel
import GatewayRuntime
import SampleBus

/// Maps quantity samples, a quantity series' quantities and blood-pressure correlations to Open
/// mHealth data points.
///
/// The header carries both the Open mHealth 1.x fields (`id`, `creation_date_time`,
/// `acquisition_provenance`) and the IEEE 1752.1 ones (`uuid`, `source_creation_date_time`,
/// `modality`), so it validates against either header schema. Bodies follow
/// omh:heart-rate:2.0, omh:step-count:3.0 and omh:physical-activity:1.2 (walking, running,
/// cycling and rowing distance, its activity named); a blood-pressure correlation follows
/// omh:blood-pressure:4.0. Other types (speeds, cadence, power, the clinical quantities sent on
/// their own) are not accepted by the sink in this format.
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

    /// The data points of `record`: one for a sample or a blood-pressure correlation; one per
    /// quantity for a series (Open mHealth's schemas have no series), each with its quantity's
    /// derived id (``QuantitySeriesSample/quantitySample(at:)``). Only closed series reach here
    /// (``PayloadBuilder/accepts(_:)``), so each quantity goes once.
    static func dataPoints(_ record: HealthRecord) -> [JSONValue] {
        switch record {
        case .quantity(let sample): [dataPoint(sample)]
        case .quantitySeries(let series): series.quantitySamples.map(dataPoint)
        case .correlation(let correlation): [dataPoint(correlation)]
        case .heartbeatSeries, .workout: []
        }
    }

    /// ``dataPoints(_:)`` with `user` (the record's person's user id at the receiver) as each
    /// header's `user_id`, the place Open mHealth's header gives the user; none without one.
    static func dataPoints(_ record: HealthRecord, user: String?) -> [JSONValue] {
        let points = dataPoints(record)
        guard let user else { return points }
        return points.map { point in
            guard case .object(var fields) = point, case .object(var header)? = fields["header"] else { return point }
            header["user_id"] = .string(user)
            fields["header"] = .object(header)
            return .object(fields)
        }
    }

    /// The data point of `sample`. Its creation time is the sample's end, so that the same
    /// sample always gives the same bytes (a batch sent again is the same request).
    static func dataPoint(_ sample: QuantitySample) -> JSONValue {
        let schema = schema(for: sample.type) ?? Schema(name: sample.type.identifier, version: "1.0")
        return .object([
            "header": header(id: sample.id, schema: schema, end: sample.endDate, device: sample.device, created: sample.endDate),
            "body": body(sample),
        ])
    }

    /// The data point of a blood-pressure correlation.
    static func dataPoint(_ correlation: CorrelationSample) -> JSONValue {
        .object([
            "header": header(
                id: correlation.id, schema: Schema(name: "blood-pressure", version: "4.0"), end: correlation.endDate,
                device: correlation.device, created: correlation.endDate),
            "body": body(correlation),
        ])
    }

    /// omh:blood-pressure:4.0: systolic and diastolic in mmHg.
    static func body(_ correlation: CorrelationSample) -> JSONValue {
        func pressure(_ type: QuantityType) -> JSONValue {
            .object([
                "value": .number(correlation.object(of: type)?.canonicalValue ?? 0), "unit": .string("mmHg"),
            ])
        }
        let frame: JSONValue = correlation.startDate == correlation.endDate
            ? .object(["date_time": .string(RFC3339.string(from: correlation.startDate))])
            : .object(["time_interval": .object([
                "start_date_time": .string(RFC3339.string(from: correlation.startDate)),
                "end_date_time": .string(RFC3339.string(from: correlation.endDate)),
            ])])
        return .object([
            "systolic_blood_pressure": pressure(.bloodPressureSystolic),
            "diastolic_blood_pressure": pressure(.bloodPressureDiastolic),
            "effective_time_frame": frame,
        ])
    }

    static func header(id: SampleID, schema: Schema, end: Date, device: Device?, created: Date) -> JSONValue {
        let uuid = id.uuidString
        let sourceCreated = RFC3339.string(from: end)
        var provenance: [String: JSONValue] = [
            "source_name": .string(sourceName(device)),
            "modality": .string("sensed"),
            "source_creation_date_time": .string(sourceCreated),
        ]
        if let device, let identifier = device.localIdentifier {
            provenance["device_identifier"] = .string(identifier)
        }
        return .object([
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
