public import FoundationEssentials
public import HealthModel
import HealthStore
public import RemoteSinkKit
import GatewayRuntime

/// Turns a batch of the store's changes into request bodies in the configured format. The same
/// batch always gives the same bytes (a resend is the same request): keys are sorted, and
/// nothing depends on the time of sending or on an earlier batch.
///
/// - **native**: `{"correlations":[…],"deleted":[…],"heartbeatSeries":[…],"quantitySeries":[…],"samples":[…],"workouts":[…]}`,
///   each element the record's HealthJSON (its sync identifier and version in its metadata, so a
///   receiver can tell a new version of an object from the first), each deletion
///   `{"kind":…,"type":…,"uuid":…}` (openapi.yaml). With `quantitySeries: expand` a closed
///   series' quantities are samples under `samples` and the body has no `quantitySeries` key:
///   the body of the releases before series. When a record names its person
///   (``HealthModel/HealthRecord/person``), `people` lists each person the batch names with
///   their identifiers (`{"Ana":{"fhirPatient":"Patient/ana-7","openMHealthUser":"u-ana-7"}}`;
///   `{}` for a person without any); a batch that names nobody has no `people` key.
/// - **fhir-r4**: a transaction Bundle with a `PUT Observation/<uuid>` per stored sample,
///   correlation or series (``FHIRMapping``; the resource's id is the uuid, so a new version
///   replaces the earlier one) and a `DELETE` per deletion.
/// - **fhir-phd**: a transaction Bundle of the HL7 Personal Health Device guide's form
///   (``PHDMapping``): the Devices and Observations, each created conditionally, and a
///   conditional `DELETE` per deletion; a series only once it is closed.
/// - **openmhealth**: an array of data points POSTed, a closed series' quantities each a data
///   point; deletions are separate requests (``deletions(for:)``).
public struct PayloadBuilder: Sendable {
    public let format: RepositoryFormat
    /// `Patient/<id>` for FHIR: the subject of the Observations of readings attributed to
    /// nobody, or to a person without a reference of their own.
    public let patientReference: String?
    /// For FHIR: each person's own `Patient/<id>` (a participant's `identifiers.fhirPatient`), by
    /// name: the subject of the Observations of their readings (``HealthModel/HealthRecord/person``).
    public let patients: [String: String]
    /// For Open mHealth: each person's user id at the receiver (`identifiers.openMHealthUser`),
    /// by name: the `user_id` of their data points' headers.
    public let users: [String: String]
    /// How series travel, as configured (``form`` is what the format makes of it).
    public let quantitySeries: QuantitySeriesForm
    /// For `fhir-phd`: the gateway's name (`gatewayName`), the identifier of the gateway's
    /// Device for readings that do not name the gateway they came by.
    public let gatewayName: String
    /// For `fhir-phd`: what the gateway knows of itself (its hardware address, how its clock is
    /// synchronised), for its PhgDevice.
    public let gatewayFacts: PHDGatewayFacts

    public init(
        format: RepositoryFormat, patientReference: String?, quantitySeries: QuantitySeriesForm = .series, patients: [String: String] = [:],
        users: [String: String] = [:], gatewayName: String = "healthgate", gatewayFacts: PHDGatewayFacts = PHDGatewayFacts()
    ) {
        self.gatewayFacts = gatewayFacts
        self.format = format
        self.patientReference = patientReference
        self.quantitySeries = quantitySeries
        self.patients = patients
        self.users = users
        self.gatewayName = gatewayName
    }

    /// The FHIR subject of `record`: its person's reference, else ``patientReference``; nil
    /// when it has neither, and then the record is not sent in FHIR (``accepts(_:)``).
    public func subject(of record: HealthRecord) -> String? {
        record.person.flatMap { patients[$0] } ?? patientReference
    }

    /// How series travel in this format: Open mHealth's schemas have no series, so its data
    /// points are always a closed series' quantities.
    public var form: QuantitySeriesForm { format == .openMHealth ? .expand : quantitySeries }

    /// Every setting of the builder that shapes a body, as a stable text: the format, the series
    /// form (``QuantitySeriesForm/identity``: none for the bodies of the releases before series)
    /// and, for FHIR, the patient reference (free text, so it comes last); for `fhir-phd` the
    /// gateway's name and facts too. Part of each batch's key (``HTTPReceiver/payloadIdentity``).
    public var identity: String {
        switch format {
        case .native:
            // The identifiers travel in `people`; none configured: the identity of before.
            "format=\(format.rawValue)\(form.identity)"
                + patients.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
                + users.sorted { $0.key < $1.key }.map { " user:\($0.key)=\($0.value)" }.joined()
        case .openMHealth: "format=\(format.rawValue)" + users.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        case .fhirR4:
            "format=\(format.rawValue)\(form.identity) patient=\(patientReference ?? "")"
                + patients.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        case .fhirPHD:
            "format=\(format.rawValue)\(form.identity) gateway=\(gatewayName) \(gatewayFacts.identity) patient=\(patientReference ?? "")"
                + patients.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        }
    }

    /// The Content-Type of the bodies.
    public var contentType: String {
        switch format {
        case .native, .openMHealth: "application/json"
        case .fhirR4, .fhirPHD: "application/fhir+json"
        }
    }

    /// Whether the format can carry `change`; the follower passes over the others (and, in the
    /// `expand` form, a series still open: ``QuantitySeriesForm/admits(_:)``).
    public func accepts(_ change: FollowedChange) -> Bool {
        guard form.admits(change) else { return false }
        switch format {
        case .native:
            return true
        case .fhirR4:
            // A reading with no subject (nobody's, and no gateway-wide patientReference) is not sent.
            if case .stored(let record, _) = change, subject(of: record) == nil { return false }
            return change.kind == .quantity || change.kind == .correlation || change.kind == .quantitySeries
        case .fhirPHD:
            switch change {
            case .stored(let record, _):
                // Held without a subject, as in fhir-r4; a series only once closed: a PHD
                // Observation is created once, never replaced. A record of a type without an
                // MDC code is taken, and reported as left out when its batch is delivered.
                guard subject(of: record) != nil else { return false }
                if case .quantitySeries(let series) = record { return !series.isProvisional }
                return change.kind == .quantity || change.kind == .correlation
            case .deleted(let deletion):
                // The deletion of what this form never sent (a type without a code) has nothing to find.
                return (deletion.kind == .quantity || deletion.kind == .correlation || deletion.kind == .quantitySeries)
                    && PHDCoding.hasCode(typeIdentifier: deletion.type)
            }
        case .openMHealth:
            switch change.kind {
            case .quantity, .quantitySeries:
                return QuantityType.named(change.typeIdentifier).flatMap(OpenMHealthMapping.schema(for:)) != nil
            case .correlation: return change.typeIdentifier == CorrelationType.bloodPressure.identifier
            case .heartbeatSeries, .workout: return false
            }
        }
    }

    /// The POST body of `batch` (before compression); nil when there is nothing to POST (an Open
    /// mHealth batch of deletions only, a `fhir-phd` batch of records it leaves out).
    /// - Throws: when a record cannot be encoded (a value JSON cannot hold).
    public func body(for batch: FollowerBatch) throws -> Data? {
        try payload(for: batch).body
    }

    /// What a batch is sent as: the POST body, and the records the format leaves out of it.
    public struct Payload: Sendable {
        /// The body (before compression); nil when there is nothing to POST.
        public var body: Data?
        /// The records of the batch the body does not carry (`fhir-phd`: a type without an MDC
        /// code, a record without a device), each as `type: reason`.
        public var leftOut: [String]
    }

    /// The body of `batch` and what it leaves out.
    /// - Throws: when a record cannot be encoded (a value JSON cannot hold).
    public func payload(for batch: FollowerBatch) throws -> Payload {
        let encoder = HealthJSON.makeEncoder()
        switch format {
        case .native:
            return Payload(body: try nativeBody(batch), leftOut: [])
        case .fhirR4:
            return Payload(
                body: try encoder.encode(
                    FHIRMapping.bundle(batch.changes.flatMap { FHIRMapping.entries(for: $0, form: form) }) { subject(of: $0) ?? "" }),
                leftOut: [])
        case .fhirPHD:
            let encoded = PHDMapping.encode(batch.changes, form: form, gateway: gatewayName, facts: gatewayFacts) { subject(of: $0) }
            return Payload(body: try encoded.bundle.map { try encoder.encode($0) }, leftOut: encoded.leftOut.map(\.description))
        case .openMHealth:
            let points = batch.records.flatMap { OpenMHealthMapping.dataPoints($0, user: $0.person.flatMap { users[$0] }) }
            return Payload(body: points.isEmpty ? nil : try encoder.encode(JSONValue.array(points)), leftOut: [])
        }
    }

    /// Open mHealth only: the data points to DELETE before the POST, in order: the deletions, and
    /// the records that carry a sync version (a new version of a data point the repository may
    /// hold: Open mHealth has no update). A deleted series is its quantities' data points
    /// (``OpenMHealthDeletion/seriesQuantities(of:limit:)``). Empty for the other formats.
    public func deletions(for batch: FollowerBatch) -> [OpenMHealthDeletion] {
        guard format == .openMHealth else { return [] }
        return batch.changes.compactMap { change in
            switch change {
            case .deleted(let deletion) where deletion.kind == .quantitySeries:
                // The most quantities the writer folds into one series of the type; a series
                // written whole from elsewhere may hold more, and those beyond are not deleted.
                let policy = QuantityType.named(deletion.type)?.seriesPolicy ?? .stream
                return .seriesQuantities(of: deletion.id, limit: policy.maximumCount)
            case .deleted(let deletion): return .dataPoint(deletion.id)
            case .stored(let record, _):
                switch record {
                case .quantity(let sample): return sample.metadata.syncVersion != nil ? .dataPoint(sample.id) : nil
                case .correlation(let correlation): return correlation.metadata.syncVersion != nil ? .dataPoint(correlation.id) : nil
                default: return nil
                }
            }
        }
    }

    /// The native body: the records' HealthJSON by kind (in the `expand` form, a series'
    /// quantities as samples), and the deletions, keys sorted.
    func nativeBody(_ batch: FollowerBatch) throws -> Data {
        let encoder = HealthJSON.makeEncoder()
        var writer = QuantitySampleJSONWriter()
        var sections: [HealthRecordKind: [[UInt8]]] = [:]
        var size = 96
        var people = Set<String>()
        for record in batch.records.flatMap(form.records) {
            if let person = record.person { people.insert(person) }
            let payload = try HealthJSONPayload.encode(record, encoder: encoder, writer: &writer)
            size += payload.count + 1
            sections[record.kind, default: []].append(payload)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size + 96 * batch.deletions.count)
        func section(_ name: String, _ elements: [[UInt8]]) {
            bytes.append(contentsOf: Array("\"\(name)\":[".utf8))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(contentsOf: element)
            }
            bytes.append(UInt8(ascii: "]"))
        }
        bytes.append(UInt8(ascii: "{"))
        section("correlations", sections[.correlation] ?? [])
        bytes.append(UInt8(ascii: ","))
        section("deleted", batch.deletions.map { deletion in
            Array("{\"kind\":\"\(deletion.kind.rawValue)\",\"type\":\(Self.jsonString(deletion.type)),\"uuid\":\"\(deletion.id)\"}".utf8)
        })
        bytes.append(UInt8(ascii: ","))
        section("heartbeatSeries", sections[.heartbeatSeries] ?? [])
        bytes.append(UInt8(ascii: ","))
        if !people.isEmpty {
            let named = Dictionary(uniqueKeysWithValues: people.map { name in
                (name, NativeBatch.PersonIdentifiers(fhirPatient: patients[name], openMHealthUser: users[name]))
            })
            bytes.append(contentsOf: Array("\"people\":".utf8))
            bytes.append(contentsOf: try encoder.encode(named))
            bytes.append(UInt8(ascii: ","))
        }
        if form == .series {
            section("quantitySeries", sections[.quantitySeries] ?? [])
            bytes.append(UInt8(ascii: ","))
        }
        section("samples", sections[.quantity] ?? [])
        bytes.append(UInt8(ascii: ","))
        section("workouts", sections[.workout] ?? [])
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }

    /// `text` as a JSON string, escaped as HealthJSON's encoder escapes it.
    static func jsonString(_ text: String) -> String {
        (try? HealthJSON.makeEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }
}

/// What an Open mHealth repository is asked to delete before a batch's POST.
public enum OpenMHealthDeletion: Sendable, Hashable {
    /// `DELETE <url>/<uuid>`; 404 and 410 count as done.
    case dataPoint(SampleID)
    /// The data points of a deleted series' quantities: the tombstone names only the series, so
    /// their ids (``SampleID/init(quantity:ofSeries:)``) are deleted in order from index 0 until
    /// the repository answers 404 or 410 (the series' data points go in one POST, so the first
    /// one missing is past its end), at most `limit` of them.
    case seriesQuantities(of: SampleID, limit: Int)
}

/// A record FHIR maps: a quantity sample, a correlation of samples, or (the series form) a
/// quantity series.
enum MappedRecord {
    case quantity(QuantitySample)
    case correlation(CorrelationSample)
    case quantitySeries(QuantitySeriesSample)

    /// The record on the bus.
    var record: HealthRecord {
        switch self {
        case .quantity(let sample): .quantity(sample)
        case .correlation(let correlation): .correlation(correlation)
        case .quantitySeries(let series): .quantitySeries(series)
        }
    }

    init?(_ record: HealthRecord) {
        switch record {
        case .quantity(let sample): self = .quantity(sample)
        case .correlation(let correlation): self = .correlation(correlation)
        case .quantitySeries(let series): self = .quantitySeries(series)
        case .heartbeatSeries, .workout: return nil
        }
    }
}

/// The native batch as a Codable value, for repositories written in Swift and for tests: the
/// body ``PayloadBuilder`` assembles decodes into it.
public struct NativeBatch: Codable, Sendable, Hashable {
    /// A deleted object, as the native body lists it.
    public struct Deletion: Codable, Sendable, Hashable {
        public var kind: HealthRecordKind
        public var type: String
        public var uuid: SampleID

        public init(kind: HealthRecordKind, type: String, uuid: SampleID) {
            self.kind = kind
            self.type = type
            self.uuid = uuid
        }
    }

    /// What the receivers call a person the batch names (a participant's `identifiers`).
    public struct PersonIdentifiers: Codable, Sendable, Hashable {
        public var fhirPatient: String?
        public var openMHealthUser: String?

        public init(fhirPatient: String? = nil, openMHealthUser: String? = nil) {
            self.fhirPatient = fhirPatient
            self.openMHealthUser = openMHealthUser
        }
    }

    public var correlations: [CorrelationSample]
    public var deleted: [Deletion]
    public var heartbeatSeries: [HeartbeatSeriesSample]
    /// Each person the batch's records name (`healthgate.person`, a workout's participant), by
    /// name, with their identifiers; empty when it names nobody.
    public var people: [String: PersonIdentifiers]
    public var quantitySeries: [QuantitySeriesSample]
    public var samples: [QuantitySample]
    public var workouts: [Workout]

    public init(
        correlations: [CorrelationSample] = [], deleted: [Deletion] = [], heartbeatSeries: [HeartbeatSeriesSample] = [],
        people: [String: PersonIdentifiers] = [:], quantitySeries: [QuantitySeriesSample] = [], samples: [QuantitySample] = [],
        workouts: [Workout] = []
    ) {
        self.correlations = correlations
        self.deleted = deleted
        self.heartbeatSeries = heartbeatSeries
        self.people = people
        self.quantitySeries = quantitySeries
        self.samples = samples
        self.workouts = workouts
    }

    enum CodingKeys: String, CodingKey { case correlations, deleted, heartbeatSeries, people, quantitySeries, samples, workouts }

    /// Encodes the body as ``PayloadBuilder`` makes it: no `people` when it names nobody.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(correlations, forKey: .correlations)
        try c.encode(deleted, forKey: .deleted)
        try c.encode(heartbeatSeries, forKey: .heartbeatSeries)
        if !people.isEmpty { try c.encode(people, forKey: .people) }
        try c.encode(quantitySeries, forKey: .quantitySeries)
        try c.encode(samples, forKey: .samples)
        try c.encode(workouts, forKey: .workouts)
    }

    /// Decodes a body; `deleted` may be absent (a body of healthgate before deletions travelled),
    /// and `quantitySeries` (a body of the `expand` form, or of healthgate before series).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            correlations: try c.decode([CorrelationSample].self, forKey: .correlations),
            deleted: try c.decodeIfPresent([Deletion].self, forKey: .deleted) ?? [],
            heartbeatSeries: try c.decode([HeartbeatSeriesSample].self, forKey: .heartbeatSeries),
            people: try c.decodeIfPresent([String: PersonIdentifiers].self, forKey: .people) ?? [:],
            quantitySeries: try c.decodeIfPresent([QuantitySeriesSample].self, forKey: .quantitySeries) ?? [],
            samples: try c.decode([QuantitySample].self, forKey: .samples),
            workouts: try c.decode([Workout].self, forKey: .workouts))
    }
}
