public import FoundationEssentials
public import HealthModel
import HealthStore
public import RemoteSinkKit
import GatewayRuntime

/// Turns a batch of the store's changes into request bodies in the configured format. The same
/// batch always gives the same bytes (a resend is the same request): keys are sorted, and
/// nothing depends on the time of sending.
///
/// - **native**: `{"correlations":[…],"deleted":[…],"heartbeatSeries":[…],"samples":[…],"workouts":[…]}`,
///   each element the record's HealthJSON (its sync identifier and version in its metadata, so a
///   receiver can tell a new version of an object from the first), each deletion
///   `{"kind":…,"type":…,"uuid":…}` (openapi.yaml).
/// - **fhir-r4**: a transaction Bundle with a `PUT Observation/<uuid>` per stored sample or
///   correlation (the resource's id is the uuid, so a new version replaces the earlier one) and a
///   `DELETE Observation/<uuid>` per deletion.
/// - **openmhealth**: an array of data points POSTed; deletions are separate requests
///   (``deletionIDs(for:)``).
public struct PayloadBuilder: Sendable {
    public let format: RepositoryFormat
    /// `Patient/<id>` for FHIR.
    public let patientReference: String?

    public init(format: RepositoryFormat, patientReference: String?) {
        self.format = format
        self.patientReference = patientReference
    }

    /// Every setting of the builder that shapes a body, as a stable text: the format and, for
    /// FHIR, the patient reference (free text, so it comes last). Part of each batch's key
    /// (``HTTPReceiver/payloadIdentity``).
    public var identity: String {
        switch format {
        case .native, .openMHealth: "format=\(format.rawValue)"
        case .fhirR4: "format=\(format.rawValue) patient=\(patientReference ?? "")"
        }
    }

    /// The Content-Type of the bodies.
    public var contentType: String {
        switch format {
        case .native, .openMHealth: "application/json"
        case .fhirR4: "application/fhir+json"
        }
    }

    /// Whether the format can carry `change`; the follower passes over the others.
    public func accepts(_ change: FollowedChange) -> Bool {
        switch format {
        case .native:
            return true
        case .fhirR4:
            return change.kind == .quantity || change.kind == .correlation
        case .openMHealth:
            switch change.kind {
            case .quantity: return QuantityType.named(change.typeIdentifier).flatMap(OpenMHealthMapping.schema(for:)) != nil
            case .correlation: return change.typeIdentifier == CorrelationType.bloodPressure.identifier
            case .quantitySeries, .heartbeatSeries, .workout: return false
            }
        }
    }

    /// The POST body of `batch` (before compression); nil when there is nothing to POST (an Open
    /// mHealth batch of deletions only).
    /// - Throws: when a record cannot be encoded (a value JSON cannot hold).
    public func body(for batch: FollowerBatch) throws -> Data? {
        switch format {
        case .native:
            return try nativeBody(batch)
        case .fhirR4:
            return try HealthJSON.makeEncoder().encode(
                FHIRMapping.bundle(batch.changes.compactMap(FHIRMapping.Entry.init), patient: patientReference ?? ""))
        case .openMHealth:
            let points = batch.records.compactMap(MappedRecord.init).map { OpenMHealthMapping.dataPoint($0) }
            return points.isEmpty ? nil : try HealthJSON.makeEncoder().encode(JSONValue.array(points))
        }
    }

    /// Open mHealth only: the data points to DELETE before the POST, `<url>/<uuid>` each: the
    /// deletions, and the records that carry a sync version (a new version of a data point the
    /// repository may hold: Open mHealth has no update). Empty for the other formats.
    public func deletionIDs(for batch: FollowerBatch) -> [SampleID] {
        guard format == .openMHealth else { return [] }
        return batch.changes.compactMap { change in
            switch change {
            case .deleted(let deletion): deletion.id
            case .stored(let record, _):
                switch record {
                case .quantity(let sample): sample.metadata.syncVersion != nil ? sample.id : nil
                case .correlation(let correlation): correlation.metadata.syncVersion != nil ? correlation.id : nil
                default: nil
                }
            }
        }
    }

    /// The native body: the records' HealthJSON by kind, and the deletions, keys sorted.
    func nativeBody(_ batch: FollowerBatch) throws -> Data {
        let encoder = HealthJSON.makeEncoder()
        var writer = QuantitySampleJSONWriter()
        var sections: [HealthRecordKind: [[UInt8]]] = [:]
        var size = 96
        for record in batch.records {
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
        section("quantitySeries", sections[.quantitySeries] ?? [])
        bytes.append(UInt8(ascii: ","))
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

/// A record FHIR and Open mHealth map: a quantity sample, or a correlation of samples.
enum MappedRecord {
    case quantity(QuantitySample)
    case correlation(CorrelationSample)

    init?(_ record: HealthRecord) {
        switch record {
        case .quantity(let sample): self = .quantity(sample)
        case .correlation(let correlation): self = .correlation(correlation)
        case .quantitySeries, .heartbeatSeries, .workout: return nil
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

    public var correlations: [CorrelationSample]
    public var deleted: [Deletion]
    public var heartbeatSeries: [HeartbeatSeriesSample]
    public var quantitySeries: [QuantitySeriesSample]
    public var samples: [QuantitySample]
    public var workouts: [Workout]

    public init(
        correlations: [CorrelationSample] = [], deleted: [Deletion] = [], heartbeatSeries: [HeartbeatSeriesSample] = [],
        quantitySeries: [QuantitySeriesSample] = [], samples: [QuantitySample] = [], workouts: [Workout] = []
    ) {
        self.correlations = correlations
        self.deleted = deleted
        self.heartbeatSeries = heartbeatSeries
        self.quantitySeries = quantitySeries
        self.samples = samples
        self.workouts = workouts
    }

    enum CodingKeys: String, CodingKey { case correlations, deleted, heartbeatSeries, quantitySeries, samples, workouts }

    /// Decodes a body; `deleted` may be absent (a body of healthgate before deletions travelled).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            correlations: try c.decode([CorrelationSample].self, forKey: .correlations),
            deleted: try c.decodeIfPresent([Deletion].self, forKey: .deleted) ?? [],
            heartbeatSeries: try c.decode([HeartbeatSeriesSample].self, forKey: .heartbeatSeries),
            quantitySeries: try c.decodeIfPresent([QuantitySeriesSample].self, forKey: .quantitySeries) ?? [],
            samples: try c.decode([QuantitySample].self, forKey: .samples),
            workouts: try c.decode([Workout].self, forKey: .workouts))
    }
}
