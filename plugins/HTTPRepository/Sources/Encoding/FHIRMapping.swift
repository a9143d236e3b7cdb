import FoundationEssentials
import HealthModel
import HealthStore
import RemoteSinkKit
import GatewayRuntime
import SampleBus

/// Maps quantity samples and correlations to FHIR R4 Observations in a transaction Bundle.
///
/// A blood-pressure correlation becomes one Observation of the vital-signs blood-pressure
/// profile: code 85354-9 (Blood pressure panel with all children optional) with two components,
/// 8480-6 systolic and 8462-4 diastolic, each a valueQuantity in `mm[Hg]`.
///
/// Each sample becomes an Observation (R4 §Observation) whose logical id is the sample's uuid, with
/// `identifier` = the uuid as a URN (system `urn:ietf:rfc:3986`), a LOINC code where one exists,
/// `valueQuantity` in UCUM, the subject from the configuration, and the device as a contained
/// Device referenced as `#device`. Each Bundle entry is an update (`PUT Observation/<uuid>`, R4
/// §3.1.0.8.1, update as create): a server that receives the same sample twice keeps one
/// Observation, and a new version of the sample (a higher sync version) replaces the earlier one.
/// A deleted sample is a `DELETE Observation/<uuid>` entry.
///
/// A quantity series (the `series` form) is one Observation with `valueSampledData`: its
/// quantities in the type's canonical unit on a regular grid (``SampledDataGrid``), `origin` 0
/// in the code's UCUM unit, `effectivePeriod` the series' start and end, the type's code as its
/// samples have it, `status` `preliminary` while the series is open and `final` once closed;
/// its id is the series' uuid, so each version replaces the earlier one. In the `expand` form a
/// closed series is one Observation per quantity (`valueQuantity`, id the quantity's derived
/// id) tagged with the series (``seriesTagSystem``), and a deleted series is a conditional
/// delete of the Observations with its tag.
enum FHIRMapping {
    struct Code {
        var loinc: String?
        var display: String
        var category: String
        var unit: String
        var ucum: String
    }

    static let healthgateSystem = "https://healthgate.dev/fhir/CodeSystem/quantity-type"

    // LOINC: 8867-4 Heart rate (the vital-signs profile's code, unit /min); 55423-8 Number of
    // steps in unspecified time Pedometer; 41953-1 Walking distance 24 hour Calculated (the
    // closest LOINC term for pedometer distance); 41981-2 Calories burned; 80404-7 R-R
    // interval.standard deviation (heart rate variability). Running speed and stride length have
    // no point-in-time LOINC term we could confirm, so they carry only healthgate's own code;
    // nor do cycling speed, cadence and power, cycling and rowing distance, rowing speed, running
    // and rowing power, or rowing stroke rate (the
    // HL7 Physical Activity IG's LOINC value set has none of them), so they too carry only
    // healthgate's code, with their UCUM units.
    static func code(for type: QuantityType) -> Code {
        switch type.identifier {
        case QuantityType.heartRate.identifier:
            Code(loinc: "8867-4", display: "Heart rate", category: "vital-signs", unit: "beats/minute", ucum: "/min")
        case QuantityType.stepCount.identifier:
            Code(loinc: "55423-8", display: "Number of steps", category: "activity", unit: "steps", ucum: "{steps}")
        case QuantityType.distanceWalkingRunning.identifier:
            Code(loinc: "41953-1", display: "Walking distance", category: "activity", unit: "m", ucum: "m")
        case QuantityType.activeEnergyBurned.identifier:
            Code(loinc: "41981-2", display: "Calories burned", category: "activity", unit: "kcal", ucum: "kcal")
        case QuantityType.heartRateVariabilitySDNN.identifier:
            Code(loinc: "80404-7", display: "R-R interval.standard deviation (Heart rate variability)",
                 category: "vital-signs", unit: "ms", ucum: "ms")
        case QuantityType.heartRateVariabilityRMSSD.identifier:
            Code(loinc: nil, display: "RMSSD (heart rate variability)", category: "vital-signs", unit: "ms", ucum: "ms")
        case QuantityType.runningSpeed.identifier:
            Code(loinc: nil, display: "Running speed", category: "activity", unit: "m/s", ucum: "m/s")
        case QuantityType.cyclingSpeed.identifier:
            Code(loinc: nil, display: "Cycling speed", category: "activity", unit: "m/s", ucum: "m/s")
        case QuantityType.cyclingCadence.identifier:
            Code(loinc: nil, display: "Cycling cadence", category: "activity", unit: "revolutions/minute", ucum: "/min")
        case QuantityType.cyclingPower.identifier:
            Code(loinc: nil, display: "Cycling power", category: "activity", unit: "W", ucum: "W")
        case QuantityType.distanceCycling.identifier:
            Code(loinc: nil, display: "Cycling distance", category: "activity", unit: "m", ucum: "m")
        case QuantityType.distanceRowing.identifier:
            Code(loinc: nil, display: "Rowing distance", category: "activity", unit: "m", ucum: "m")
        case QuantityType.rowingSpeed.identifier:
            Code(loinc: nil, display: "Rowing speed", category: "activity", unit: "m/s", ucum: "m/s")
        case QuantityType.runningPower.identifier:
            Code(loinc: nil, display: "Running power", category: "activity", unit: "W", ucum: "W")
        case QuantityType.rowingPower.identifier:
            Code(loinc: nil, display: "Rowing power", category: "activity", unit: "W", ucum: "W")
        case QuantityType.rowingStrokeRate.identifier:
            Code(loinc: nil, display: "Rowing stroke rate", category: "activity", unit: "strokes/minute", ucum: "/min")
        // The vital-signs profile's codes (FHIR R4 §observation-vitalsigns) and their UCUM units.
        case QuantityType.bodyMass.identifier:
            Code(loinc: "29463-7", display: "Body weight", category: "vital-signs", unit: "kg", ucum: "kg")
        case QuantityType.bodyMassIndex.identifier:
            Code(loinc: "39156-5", display: "Body mass index (BMI) [Ratio]", category: "vital-signs", unit: "kg/m2",
                 ucum: "kg/m2")
        case QuantityType.height.identifier:
            Code(loinc: "8302-2", display: "Body height", category: "vital-signs", unit: "m", ucum: "m")
        case QuantityType.bodyTemperature.identifier:
            Code(loinc: "8310-5", display: "Body temperature", category: "vital-signs", unit: "C", ucum: "Cel")
        case QuantityType.oxygenSaturation.identifier:
            Code(loinc: "59408-5", display: "Oxygen saturation in Arterial blood by Pulse oximetry",
                 category: "vital-signs", unit: "%", ucum: "%")
        case QuantityType.bloodPressureSystolic.identifier:
            Code(loinc: "8480-6", display: "Systolic blood pressure", category: "vital-signs", unit: "mmHg",
                 ucum: "mm[Hg]")
        case QuantityType.bloodPressureDiastolic.identifier:
            Code(loinc: "8462-4", display: "Diastolic blood pressure", category: "vital-signs", unit: "mmHg",
                 ucum: "mm[Hg]")
        case QuantityType.respiratoryRate.identifier:
            Code(loinc: "9279-1", display: "Respiratory rate", category: "vital-signs", unit: "breaths/minute", ucum: "/min")
        case QuantityType.bloodGlucose.identifier:
            Code(loinc: "2339-0", display: "Glucose [Mass/volume] in Blood", category: "laboratory", unit: "mg/dL",
                 ucum: "mg/dL")
        // Body fat percentage, lean body mass and perfusion index carry healthgate's code only.
        case QuantityType.bodyFatPercentage.identifier:
            Code(loinc: nil, display: "Body fat percentage", category: "vital-signs", unit: "%", ucum: "%")
        case QuantityType.leanBodyMass.identifier:
            Code(loinc: nil, display: "Lean body mass", category: "vital-signs", unit: "kg", ucum: "kg")
        case QuantityType.peripheralPerfusionIndex.identifier:
            Code(loinc: nil, display: "Peripheral perfusion index", category: "vital-signs", unit: "%", ucum: "%")
        default:
            Code(loinc: nil, display: type.identifier, category: "activity", unit: type.canonicalUnit.unitString,
                 ucum: type.canonicalUnit.unitString)
        }
    }

    /// The blood-pressure panel's code (a correlation's Observation).
    static let bloodPressurePanel = Code(
        loinc: "85354-9", display: "Blood pressure panel with all children optional", category: "vital-signs",
        unit: "mmHg", ucum: "mm[Hg]")

    /// The code of the R4 vital-signs profile (observation-vitalsigns) a type's readings fall
    /// under, or nil when they fall under none: the `fhir-phd` form adds it to the MDC code, as
    /// the PHD guide requires for a vital sign (Nomenclaturecodes.md, "Observation codes"). The
    /// profiles' codes are this table's but for oxygen saturation, whose R4 profile names 2708-6
    /// (the guide's examples, bundle-continuousnonin.json, send it so); the blood pressure's is
    /// ``bloodPressurePanel``.
    static func vitalSign(_ type: QuantityType) -> Code? {
        switch type.identifier {
        case QuantityType.oxygenSaturation.identifier:
            Code(loinc: "2708-6", display: "Oxygen saturation in Arterial blood", category: "vital-signs", unit: "%", ucum: "%")
        case QuantityType.heartRate.identifier, QuantityType.respiratoryRate.identifier, QuantityType.bodyTemperature.identifier,
            QuantityType.height.identifier, QuantityType.bodyMass.identifier, QuantityType.bodyMassIndex.identifier,
            QuantityType.bloodPressureSystolic.identifier, QuantityType.bloodPressureDiastolic.identifier:
            code(for: type)
        default:
            nil
        }
    }

    /// The identifier system of a device's local identifier (a BLE address, a USB serial, a
    /// `manufacturer/serial`): healthgate's own, as no registered system names it.
    static let localDeviceIdentifierSystem = "https://healthgate.dev/fhir/NamingSystem/local-device-identifier"

    /// A Bundle entry: an Observation to store (create or replace), one to delete, or (the
    /// `expand` form) the Observations of a deleted series' quantities.
    enum Entry {
        case put(MappedRecord)
        case delete(SampleID)
        case deleteSeriesQuantities(SampleID)
    }

    /// The entries of `change`: a stored record's Observation (in the `expand` form, one per
    /// quantity of a series), or its deletion.
    static func entries(for change: FollowedChange, form: QuantitySeriesForm) -> [Entry] {
        switch change {
        case .stored(let record, _):
            return form.records(record).compactMap(MappedRecord.init).map(Entry.put)
        case .deleted(let deletion):
            switch deletion.kind {
            case .quantity, .correlation: return [.delete(deletion.id)]
            case .quantitySeries: return [form == .series ? .delete(deletion.id) : .deleteSeriesQuantities(deletion.id)]
            case .heartbeatSeries, .workout: return []
            }
        }
    }

    /// The Observation's logical id: the uuid, which FHIR's id syntax (`[A-Za-z0-9\-\.]{1,64}`) admits.
    static func resourceID(_ id: SampleID) -> String { id.uuidString.lowercased() }

    /// The code system of the tag an Observation of a series' quantity carries (the `expand`
    /// form), its code the series' uuid: what deleting the series selects (``Entry/deleteSeriesQuantities(_:)``).
    static let seriesTagSystem = "https://healthgate.dev/fhir/CodeSystem/quantity-series"

    /// A transaction Bundle of `entries`, each Observation's subject `subject` of its record.
    static func bundle(_ entries: [Entry], subject: (HealthRecord) -> String) -> JSONValue {
        .object([
            "resourceType": .string("Bundle"),
            "type": .string("transaction"),
            "entry": .array(entries.map { entry in
                switch entry {
                case .put(let record):
                    let patient = subject(record.record)
                    let id: SampleID
                    var resource: JSONValue
                    switch record {
                    case .quantity(let sample):
                        id = sample.id
                        resource = observation(sample, patient: patient)
                    case .correlation(let correlation):
                        id = correlation.id
                        resource = observation(correlation, patient: patient)
                    case .quantitySeries(let series):
                        id = series.id
                        resource = observation(series, patient: patient)
                    }
                    if case .object(var fields) = resource {
                        fields["id"] = .string(resourceID(id))
                        resource = .object(fields)
                    }
                    return .object([
                        "fullUrl": .string("urn:uuid:\(id.uuidString)"),
                        "resource": resource,
                        "request": .object(["method": .string("PUT"), "url": .string("Observation/\(resourceID(id))")]),
                    ])
                case .delete(let id):
                    return .object([
                        "request": .object(["method": .string("DELETE"), "url": .string("Observation/\(resourceID(id))")]),
                    ])
                case .deleteSeriesQuantities(let id):
                    // A conditional delete (R4 §3.1.0.7.1): the tombstone names only the series,
                    // and its quantities' Observations carry its tag.
                    return .object([
                        "request": .object([
                            "method": .string("DELETE"), "url": .string("Observation?_tag=\(seriesTagSystem)|\(resourceID(id))"),
                        ]),
                    ])
                }
            }),
        ])
    }

    /// A quantity sample: `valueQuantity` in the code's unit; a string observation's text as
    /// `valueString`, a TLV-encoded observation's attributes as components (``MDCValueKind``).
    static func observation(_ sample: QuantitySample, patient: String) -> JSONValue {
        let code = code(for: sample.type)
        var resource = observationBase(
            id: sample.id, code: code, identifier: sample.type.identifier, start: sample.startDate, end: sample.endDate,
            device: sample.device, metadata: sample.metadata, patient: patient)
        // A Generic Health Sensor's string or TLV-encoded observation: its content, not its count.
        switch (sample.metadata.mdcValueKind, sample.metadata[.mdcText]) {
        case (.text?, .string(let text)?) where !text.isEmpty: resource["valueString"] = .string(text)
        case (.text?, .string?): resource["dataAbsentReason"] = PHDCoding.noContent
        case (.attributes?, _):
            let attributes = PHDCoding.attributeComponents(sample.metadata)
            resource[attributes.isEmpty ? "dataAbsentReason" : "component"] = attributes.isEmpty ? PHDCoding.noContent : .array(attributes)
        default: resource["valueQuantity"] = valueQuantity(sample, code: code)
        }
        if case .string(let series)? = sample.metadata[.series] {
            resource["meta"] = .object(["tag": .array([.object([
                "system": .string(seriesTagSystem), "code": .string(series.lowercased()),
            ])])])
        }
        return .object(resource)
    }

    /// A series: one Observation with `valueSampledData` (``SampledDataGrid``), its
    /// `effectivePeriod` the series' start and end, the type's code, and the status
    /// `preliminary` while the series is open (a later version replaces it), `final` once closed.
    static func observation(_ series: QuantitySeriesSample, patient: String) -> JSONValue {
        let code = code(for: series.type)
        var resource = observationBase(
            id: series.id, code: code, identifier: series.type.identifier, start: series.startDate, end: series.endDate,
            device: series.device, metadata: series.metadata, patient: patient)
        if series.isProvisional { resource["status"] = .string("preliminary") }
        let values = series.quantities.map { quantity in
            // The series' values were validated against its type's units when it was made.
            (try? Quantity(quantity.value, series.unit).doubleValue(for: series.type.canonicalUnit)) ?? quantity.value
        }
        let grid = SampledDataGrid(starts: series.quantities.map(\.startDate), from: series.startDate)
        resource["valueSampledData"] = .object([
            "origin": .object([
                "value": .number(0), "unit": .string(code.unit), "system": .string("http://unitsofmeasure.org"),
                "code": .string(code.ucum),
            ]),
            "period": .number(grid.periodMilliseconds),
            "dimensions": .number(1),
            "data": .string(grid.data(values)),
        ])
        return .object(resource)
    }

    /// A correlation: the panel's code, one component per member.
    static func observation(_ correlation: CorrelationSample, patient: String) -> JSONValue {
        let panel = correlation.type == .bloodPressure
            ? bloodPressurePanel
            : Code(loinc: nil, display: correlation.type.identifier, category: "vital-signs", unit: "", ucum: "")
        var resource = observationBase(
            id: correlation.id, code: panel, identifier: correlation.type.identifier, start: correlation.startDate,
            end: correlation.endDate, device: correlation.device, metadata: correlation.metadata, patient: patient)
        resource["component"] = .array(correlation.objects.map { member in
            let code = code(for: member.type)
            return .object([
                "code": .object(["coding": .array(codings(code, identifier: member.type.identifier)), "text": .string(code.display)]),
                "valueQuantity": valueQuantity(member, code: code),
            ])
        })
        return .object(resource)
    }

    static func valueQuantity(_ sample: QuantitySample, code: Code) -> JSONValue {
        .object([
            "value": .number(sample.canonicalValue), "unit": .string(code.unit),
            "system": .string("http://unitsofmeasure.org"), "code": .string(code.ucum),
        ])
    }

    /// The LOINC coding where there is one, then healthgate's own.
    static func codings(_ code: Code, identifier: String) -> [JSONValue] {
        var codings: [JSONValue] = []
        if let loinc = code.loinc {
            codings.append(.object([
                "system": .string("http://loinc.org"), "code": .string(loinc), "display": .string(code.display),
            ]))
        }
        codings.append(.object([
            "system": .string(healthgateSystem), "code": .string(identifier), "display": .string(code.display),
        ]))
        return codings
    }

    /// Everything but the value: identifier, status, category, code, subject, time and device.
    static func observationBase(
        id: SampleID, code: Code, identifier: String, start: Date, end: Date, device: Device?, metadata: Metadata,
        patient: String
    ) -> [String: JSONValue] {
        let codings = codings(code, identifier: identifier)
        let categoryDisplay = switch code.category {
        case "vital-signs": "Vital Signs"
        case "laboratory": "Laboratory"
        default: "Activity"
        }
        var resource: [String: JSONValue] = [
            "resourceType": .string("Observation"),
            "identifier": .array([.object([
                "system": .string("urn:ietf:rfc:3986"), "value": .string("urn:uuid:\(id.uuidString)"),
            ])]),
            "status": .string("final"),
            "category": .array([.object([
                "coding": .array([.object([
                    "system": .string("http://terminology.hl7.org/CodeSystem/observation-category"),
                    "code": .string(code.category),
                    "display": .string(categoryDisplay),
                ])]),
            ])]),
            "code": .object(["coding": .array(codings), "text": .string(code.display)]),
            "subject": .object(["reference": .string(patient)]),
        ]
        if start == end {
            resource["effectiveDateTime"] = .string(RFC3339.string(from: start))
        } else {
            resource["effectivePeriod"] = .object([
                "start": .string(RFC3339.string(from: start)),
                "end": .string(RFC3339.string(from: end)),
            ])
        }
        if let device {
            resource["contained"] = .array([deviceResource(device, serialNumber: metadata.deviceSerialNumber)])
            resource["device"] = .object(["reference": .string("#device"), "display": .string(device.displayName)])
        }
        return resource
    }

    /// An R4 Device: manufacturer, model number, names, identifiers (the gateway's local
    /// identifier, and the UDI when known), the serial number and the hardware, firmware and
    /// software versions. The serial number is the one the device gave (the sample's
    /// `deviceSerialNumber`, from Device Information or an ANT+ strap's page 2); without it, the
    /// local identifier, which names the device as closely as the gateway knows it.
    static func deviceResource(_ device: Device, serialNumber: String?) -> JSONValue {
        var resource: [String: JSONValue] = ["resourceType": .string("Device"), "id": .string("device")]
        if let manufacturer = device.manufacturer { resource["manufacturer"] = .string(manufacturer) }
        if let model = device.model { resource["modelNumber"] = .string(model) }
        if let name = device.name {
            resource["deviceName"] = .array([.object(["name": .string(name), "type": .string("user-friendly-name")])])
        }
        if let local = device.localIdentifier {
            resource["identifier"] = .array([.object([
                "system": .string(localDeviceIdentifierSystem),
                "value": .string(local),
            ])])
        }
        if let serial = serialNumber ?? device.localIdentifier { resource["serialNumber"] = .string(serial) }
        if let udi = device.udiDeviceIdentifier {
            resource["udiCarrier"] = .array([.object(["deviceIdentifier": .string(udi)])])
        }
        let versions: [(String, String?)] = [
            ("hardware", device.hardwareVersion), ("firmware", device.firmwareVersion), ("software", device.softwareVersion),
        ]
        let present = versions.compactMap { kind, value in
            value.map { JSONValue.object(["type": .object(["text": .string(kind)]), "value": .string($0)]) }
        }
        if !present.isEmpty { resource["version"] = .array(present) }
        return .object(resource)
    }
}
