public import FoundationEssentials
public import HealthModel
public import GatewayRuntime
public import SampleBus

/// One person's readings as a FHIR R4 `collection` Bundle, what `healthgate participant export
/// --format fhir` writes (GDPR article 20: their data in a portable form): each reading the
/// `fhir-r4` sink sends, as the same Observation (``FHIRMapping``: a sample, a blood pressure's
/// panel, a quantity series as `valueSampledData`), each entry's `fullUrl` its `urn:uuid`.
///
/// The subject is the person's `identifiers.fhirPatient` when the configuration gives one (the
/// receiver's Patient); else the Bundle carries a Patient of its own, named after the person,
/// its `fullUrl` a `urn:uuid` derived from the name (the same in every export), and the
/// Observations refer to it by that URN.
///
/// FHIR has no form here for a workout or a heartbeat series: they are not in the Bundle, and
/// ``Export/leftOut`` counts them (the JSON export has them).
///
/// The catalog lists it as the export format `fhir` (``SampleBus/PersonExportFormat``).
public enum FHIRPersonExport: PersonExportFormat {
    public static let name = "fhir"
    public static let summary = "a FHIR R4 collection Bundle of the person's Observations (as the fhir-r4 sink sends them)"

    /// The Bundle as JSON, its subject the person's `identifiers.fhirPatient` (else a Patient in
    /// it), and what it holds.
    public static func export(person: ParticipantCharacteristics, records: [HealthRecord], at date: Date) throws -> PersonExportFile {
        let export = bundle(person: person.name, patientReference: person.fhirPatient, records: records, timestamp: date)
        let bytes = try HealthJSON.makeEncoder(pretty: true).encode(export.bundle)
        var description = String(count: export.observations, "Observation")
            + " (subject \(person.fhirPatient ?? "a Patient in the Bundle"))"
        if export.leftOut > 0 {
            description += "; " + String(count: export.leftOut, "workout or heartbeat series", plural: "workouts and heartbeat series")
                + " left out (no FHIR form: --format json has them)"
        }
        return PersonExportFile(bytes: Array(bytes), description: description)
    }

    /// The Bundle and what it could not hold.
    public struct Export: Sendable {
        /// The `collection` Bundle.
        public var bundle: JSONValue
        /// The Observations in it.
        public var observations: Int
        /// The records with no FHIR form here (workouts, heartbeat series).
        public var leftOut: Int
    }

    /// The Bundle of `records` (the person's, as on the bus), the subject `patientReference`
    /// (`Patient/<id>`) or, when nil, a Patient in the Bundle named `person`; `timestamp` is
    /// the Bundle's.
    public static func bundle(person: String, patientReference: String?, records: [HealthRecord], timestamp: Date) -> Export {
        var entries: [JSONValue] = []
        let subject: String
        if let patientReference {
            subject = patientReference
        } else {
            let id = SampleID(syncIdentifier: "healthgate-person:\(person)", version: 1)
            subject = "urn:uuid:\(id.uuidString.lowercased())"
            entries.append(.object([
                "fullUrl": .string(subject),
                "resource": .object([
                    "resourceType": .string("Patient"), "id": .string(FHIRMapping.resourceID(id)),
                    "name": .array([.object(["text": .string(person)])]),
                ]),
            ]))
        }
        var leftOut = 0
        var observations = 0
        for record in records {
            guard let mapped = MappedRecord(record) else {
                leftOut += 1
                continue
            }
            let (id, observation): (SampleID, JSONValue) = switch mapped {
            case .quantity(let sample): (sample.id, FHIRMapping.observation(sample, patient: subject))
            case .correlation(let correlation): (correlation.id, FHIRMapping.observation(correlation, patient: subject))
            case .quantitySeries(let series): (series.id, FHIRMapping.observation(series, patient: subject))
            }
            var resource = observation
            if case .object(var fields) = resource {
                fields["id"] = .string(FHIRMapping.resourceID(id))
                resource = .object(fields)
            }
            entries.append(.object(["fullUrl": .string("urn:uuid:\(FHIRMapping.resourceID(id))"), "resource": resource]))
            observations += 1
        }
        let bundle: JSONValue = .object([
            "resourceType": .string("Bundle"), "type": .string("collection"),
            "timestamp": .string(RFC3339.string(from: timestamp)), "entry": .array(entries),
        ])
        return Export(bundle: bundle, observations: observations, leftOut: leftOut)
    }
}
