public import Foundation
public import HealthModel
public import RemoteOutbox
import SampleBus

/// A request body and the records that could not go into it (undecodable rows).
struct Payload: Sendable {
    var body: Data
    var unusable: [OutboxRecord]
    /// Where each record's payload starts in `body` (native bodies only; see
    /// ``OutboxBody/payloadOffsets``).
    var payloadOffsets: [Int]? = nil
}

/// Turns records into request bodies in the configured format.
///
/// Outbox records hold each record's HealthJSON, so the native body is assembled by
/// concatenating the stored bytes, with no decoding or re-encoding: the same bytes
/// ``HealthJSON`` would produce for a `NativeBatch`, since its keys are sorted and each element
/// is HealthJSON. FHIR and Open mHealth bodies map the samples: at intake straight from the
/// records taken from the bus (``payload(for:samples:)``), and when a batch is merged or
/// bisected from the stored HealthJSON, decoded.
public struct PayloadBuilder: Sendable {
    public let format: RepositoryFormat
    /// `Patient/<id>` for FHIR.
    public let patientReference: String?

    public init(format: RepositoryFormat, patientReference: String?) {
        self.format = format
        self.patientReference = patientReference
    }

    /// The Content-Type of the bodies.
    public var contentType: String {
        switch format {
        case .native, .openMHealth: "application/json"
        case .fhirR4: "application/fhir+json"
        }
    }

    /// Whether records of this kind and type can be sent in the format.
    public func accepts(_ record: HealthRecord) -> Bool {
        switch (format, record) {
        case (.native, _): true
        case (.fhirR4, .quantity), (.fhirR4, .correlation): true
        case (.openMHealth, .quantity(let sample)): OpenMHealthMapping.schema(for: sample.type) != nil
        case (.openMHealth, .correlation(let correlation)): correlation.type == .bloodPressure
        default: false
        }
    }

    /// The request body for `records` (before compression). Records that cannot be decoded
    /// (FHIR, Open mHealth) are left out.
    public func body(for records: [OutboxRecord]) -> Data {
        payload(for: records).body
    }

    /// The body for `records`, decoding their HealthJSON where the format needs the samples.
    func payload(for records: [OutboxRecord]) -> Payload {
        switch format {
        case .native:
            let (body, offsets) = nativeBodyAndOffsets(records)
            return Payload(body: body, unusable: [], payloadOffsets: offsets)
        case .fhirR4, .openMHealth:
            let decoder = HealthJSON.makeDecoder()
            var samples: [(OutboxRecord, MappedRecord)] = []
            var unusable: [OutboxRecord] = []
            for record in records {
                if record.kind == .quantity, let sample = try? decoder.decode(QuantitySample.self, from: Data(record.payload)) {
                    samples.append((record, .quantity(sample)))
                } else if record.kind == .correlation,
                    let correlation = try? decoder.decode(CorrelationSample.self, from: Data(record.payload))
                {
                    samples.append((record, .correlation(correlation)))
                } else {
                    unusable.append(record)
                }
            }
            return Payload(body: mappedBody(samples), unusable: unusable)
        }
    }

    /// The body for records taken from the bus: `stored[i]` is `records[i]` as stored. FHIR and
    /// Open mHealth map the samples as they are, without decoding the stored HealthJSON.
    func payload(for stored: [OutboxRecord], samples records: [HealthRecord]) -> Payload {
        switch format {
        case .native:
            let (body, offsets) = nativeBodyAndOffsets(stored)
            return Payload(body: body, unusable: [], payloadOffsets: offsets)
        case .fhirR4, .openMHealth:
            var samples: [(OutboxRecord, MappedRecord)] = []
            var unusable: [OutboxRecord] = []
            for (entry, record) in zip(stored, records) {
                switch record {
                case .quantity(let sample): samples.append((entry, .quantity(sample)))
                case .correlation(let correlation): samples.append((entry, .correlation(correlation)))
                case .heartbeatSeries, .workout: unusable.append(entry)
                }
            }
            return Payload(body: mappedBody(samples), unusable: unusable)
        }
    }

    private func mappedBody(_ samples: [(OutboxRecord, MappedRecord)]) -> Data {
        let value = format == .fhirR4
            ? FHIRMapping.bundle(samples.map(\.1), patient: patientReference ?? "")
            : .array(samples.map { OpenMHealthMapping.dataPoint($0.1, created: $0.0.enqueuedAt) })
        let encoder = HealthJSON.makeEncoder()
        // JSONValue holds only finite numbers and strings, so encoding cannot fail; an empty
        // body would be refused by the server and show up in status if it ever did.
        return (try? encoder.encode(value)) ?? Data()
    }

    /// `{"correlations":[…],"heartbeatSeries":[…],"samples":[…],"workouts":[…]}` from the stored
    /// HealthJSON.
    func nativeBody(_ entries: [OutboxRecord]) -> Data {
        nativeBodyAndOffsets(entries).body
    }

    /// The native body and where each entry's HealthJSON starts in it (`offsets[i]` for
    /// `entries[i]`), so the outbox need not store the payloads a second time.
    func nativeBodyAndOffsets(_ entries: [OutboxRecord]) -> (body: Data, offsets: [Int]) {
        var offsets = [Int](repeating: 0, count: entries.count)
        var size = 64
        for entry in entries { size += entry.payload.count + 1 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        func section(_ name: String, _ kind: HealthRecordKind, last: Bool) {
            bytes.append(contentsOf: Array("\"\(name)\":[".utf8))
            var first = true
            for (index, entry) in entries.enumerated() where entry.kind == kind {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                offsets[index] = bytes.count
                bytes.append(contentsOf: entry.payload)
            }
            bytes.append(UInt8(ascii: "]"))
            if !last { bytes.append(UInt8(ascii: ",")) }
        }
        bytes.append(UInt8(ascii: "{"))
        section("correlations", .correlation, last: false)
        section("heartbeatSeries", .heartbeatSeries, last: false)
        section("samples", .quantity, last: false)
        section("workouts", .workout, last: true)
        bytes.append(UInt8(ascii: "}"))
        return (Data(bytes), offsets)
    }

    /// A deterministic key for a batch: the same uuids give the same key, in any order
    /// (``OutboxBatchKey/key(for:)``). The outbox stores it with the batch, so every attempt,
    /// before and after a restart, carries the key of the first.
    public static func idempotencyKey(for ids: [SampleID]) -> String {
        OutboxBatchKey.key(for: ids)
    }
}

/// A record FHIR and Open mHealth map: a quantity sample, or a correlation of samples.
enum MappedRecord {
    case quantity(QuantitySample)
    case correlation(CorrelationSample)
}

/// The native batch as a Codable value, for repositories written in Swift and for tests: the
/// body ``PayloadBuilder`` assembles decodes into it.
public struct NativeBatch: Codable, Sendable, Hashable {
    public var correlations: [CorrelationSample]
    public var heartbeatSeries: [HeartbeatSeriesSample]
    public var samples: [QuantitySample]
    public var workouts: [Workout]

    public init(
        correlations: [CorrelationSample] = [], heartbeatSeries: [HeartbeatSeriesSample] = [],
        samples: [QuantitySample] = [], workouts: [Workout] = []
    ) {
        self.correlations = correlations
        self.heartbeatSeries = heartbeatSeries
        self.samples = samples
        self.workouts = workouts
    }
}
