import Foundation
import HealthModel
import SampleBus

/// Maps quantity samples to FHIR R4 Observations in a transaction Bundle.
///
/// Each sample becomes an Observation (R4 §Observation) with `identifier` = the sample uuid as a
/// URN (system `urn:ietf:rfc:3986`), a LOINC code where one exists, `valueQuantity` in UCUM, the
/// subject from the configuration, and the device as a contained Device referenced as `#device`.
/// Each Bundle entry is a conditional create (`ifNoneExist` on the identifier, R4 §3.1.0.8.1), so
/// a server that receives the same sample twice keeps one Observation.
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
    // nor do cycling speed, cadence and power, cycling and rowing distance, or rowing speed (the
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
        default:
            Code(loinc: nil, display: type.identifier, category: "activity", unit: type.canonicalUnit.unitString,
                 ucum: type.canonicalUnit.unitString)
        }
    }

    static func bundle(_ samples: [QuantitySample], patient: String) -> JSONValue {
        .object([
            "resourceType": .string("Bundle"),
            "type": .string("transaction"),
            "entry": .array(samples.map { sample in
                let urn = "urn:uuid:\(sample.id.uuidString)"
                return .object([
                    "fullUrl": .string(urn),
                    "resource": observation(sample, patient: patient),
                    "request": .object([
                        "method": .string("POST"),
                        "url": .string("Observation"),
                        "ifNoneExist": .string("identifier=urn:ietf:rfc:3986|\(urn)"),
                    ]),
                ])
            }),
        ])
    }

    static func observation(_ sample: QuantitySample, patient: String) -> JSONValue {
        let code = code(for: sample.type)
        var codings: [JSONValue] = []
        if let loinc = code.loinc {
            codings.append(.object([
                "system": .string("http://loinc.org"), "code": .string(loinc), "display": .string(code.display),
            ]))
        }
        codings.append(.object([
            "system": .string(healthgateSystem), "code": .string(sample.type.identifier), "display": .string(code.display),
        ]))
        var resource: [String: JSONValue] = [
            "resourceType": .string("Observation"),
            "identifier": .array([.object([
                "system": .string("urn:ietf:rfc:3986"), "value": .string("urn:uuid:\(sample.id.uuidString)"),
            ])]),
            "status": .string("final"),
            "category": .array([.object([
                "coding": .array([.object([
                    "system": .string("http://terminology.hl7.org/CodeSystem/observation-category"),
                    "code": .string(code.category),
                    "display": .string(code.category == "vital-signs" ? "Vital Signs" : "Activity"),
                ])]),
            ])]),
            "code": .object(["coding": .array(codings), "text": .string(code.display)]),
            "subject": .object(["reference": .string(patient)]),
            "valueQuantity": .object([
                "value": .number(sample.canonicalValue), "unit": .string(code.unit),
                "system": .string("http://unitsofmeasure.org"), "code": .string(code.ucum),
            ]),
        ]
        if sample.startDate == sample.endDate {
            resource["effectiveDateTime"] = .string(RFC3339.string(from: sample.startDate))
        } else {
            resource["effectivePeriod"] = .object([
                "start": .string(RFC3339.string(from: sample.startDate)),
                "end": .string(RFC3339.string(from: sample.endDate)),
            ])
        }
        if let device = sample.device {
            resource["contained"] = .array([deviceResource(device)])
            resource["device"] = .object(["reference": .string("#device"), "display": .string(device.displayName)])
        }
        return .object(resource)
    }

    /// An R4 Device: manufacturer, model number, names, identifiers (the gateway's local
    /// identifier, and the UDI when known) and the hardware, firmware and software versions.
    static func deviceResource(_ device: Device) -> JSONValue {
        var resource: [String: JSONValue] = ["resourceType": .string("Device"), "id": .string("device")]
        if let manufacturer = device.manufacturer { resource["manufacturer"] = .string(manufacturer) }
        if let model = device.model { resource["modelNumber"] = .string(model) }
        if let name = device.name {
            resource["deviceName"] = .array([.object(["name": .string(name), "type": .string("user-friendly-name")])])
        }
        if let local = device.localIdentifier {
            resource["identifier"] = .array([.object([
                "system": .string("https://healthgate.dev/fhir/NamingSystem/local-device-identifier"),
                "value": .string(local),
            ])])
            resource["serialNumber"] = .string(local)
        }
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
