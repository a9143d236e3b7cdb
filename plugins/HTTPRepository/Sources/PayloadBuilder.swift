public import Foundation
public import HealthModel
import SampleBus

/// A request body and the outbox entries that could not go into it (undecodable rows).
struct Payload: Sendable {
    var body: Data
    var unusable: [OutboxEntry]
}

/// Turns outbox entries into request bodies in the configured format.
///
/// Entries hold each record's HealthJSON, so the native body is assembled by concatenating the
/// stored bytes, with no decoding or re-encoding: the same bytes ``HealthJSON`` would produce for
/// a `NativeBatch`, since its keys are sorted and each element is HealthJSON. FHIR and Open
/// mHealth bodies decode the samples and map them.
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
        case (.fhirR4, .quantity): true
        case (.openMHealth, .quantity(let sample)): OpenMHealthMapping.schema(for: sample.type) != nil
        default: false
        }
    }

    /// The HealthJSON of a record's sample, as stored in the outbox.
    public static func storedPayload(of record: HealthRecord, encoder: JSONEncoder) throws -> [UInt8] {
        switch record {
        case .quantity(let sample): Array(try encoder.encode(sample))
        case .heartbeatSeries(let series): Array(try encoder.encode(series))
        case .workout(let workout): Array(try encoder.encode(workout))
        }
    }

    /// ``storedPayload(of:encoder:)`` through the hand-written writer where it applies (the same
    /// bytes, several times faster; see ``QuantitySampleJSONWriter``).
    static func storedPayload(of record: HealthRecord, encoder: JSONEncoder, writer: inout QuantitySampleJSONWriter) throws -> [UInt8] {
        if case .quantity(let sample) = record, let bytes = writer.encode(sample) { return bytes }
        return try storedPayload(of: record, encoder: encoder)
    }

    /// The request body for `entries` (before compression). Entries that cannot be decoded
    /// (FHIR, Open mHealth) are left out.
    public func body(for entries: [OutboxEntry]) -> Data {
        payload(for: entries).body
    }

    func payload(for entries: [OutboxEntry]) -> Payload {
        switch format {
        case .native: return Payload(body: nativeBody(entries), unusable: [])
        case .fhirR4, .openMHealth:
            let decoder = HealthJSON.makeDecoder()
            var samples: [(OutboxEntry, QuantitySample)] = []
            var unusable: [OutboxEntry] = []
            for entry in entries {
                if entry.kind == .quantity, let sample = try? decoder.decode(QuantitySample.self, from: Data(entry.payload)) {
                    samples.append((entry, sample))
                } else {
                    unusable.append(entry)
                }
            }
            let value = format == .fhirR4
                ? FHIRMapping.bundle(samples.map(\.1), patient: patientReference ?? "")
                : .array(samples.map { OpenMHealthMapping.dataPoint($0.1, created: $0.0.enqueuedAt) })
            let encoder = HealthJSON.makeEncoder()
            // JSONValue holds only finite numbers and strings, so encoding cannot fail; an empty
            // body would be refused by the server and show up in status if it ever did.
            let body = (try? encoder.encode(value)) ?? Data()
            return Payload(body: body, unusable: unusable)
        }
    }

    /// `{"heartbeatSeries":[…],"samples":[…],"workouts":[…]}` from the stored HealthJSON.
    func nativeBody(_ entries: [OutboxEntry]) -> Data {
        var size = 64
        for entry in entries { size += entry.payload.count + 1 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        func section(_ name: String, _ kind: HealthRecordKind, last: Bool) {
            bytes.append(contentsOf: Array("\"\(name)\":[".utf8))
            var first = true
            for entry in entries where entry.kind == kind {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                bytes.append(contentsOf: entry.payload)
            }
            bytes.append(UInt8(ascii: "]"))
            if !last { bytes.append(UInt8(ascii: ",")) }
        }
        bytes.append(UInt8(ascii: "{"))
        section("heartbeatSeries", .heartbeatSeries, last: false)
        section("samples", .quantity, last: false)
        section("workouts", .workout, last: true)
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }

    /// A deterministic key for a batch: the same uuids give the same key, in any order, so a
    /// retried batch carries the key of its first attempt. Two independent 64-bit FNV-1a
    /// digests of the sorted uuids, finalised with splitmix64; a de-duplication key, not a
    /// cryptographic hash.
    public static func idempotencyKey(for ids: [SampleID]) -> String {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        for id in ids.sorted() {
            for word in [id.high, id.low] {
                for shift in stride(from: 56, through: 0, by: -8) {
                    let byte = UInt64((word >> UInt64(shift)) & 0xFF)
                    first = (first ^ byte) &* 0x0000_0100_0000_01B3
                    second = (second ^ (byte ^ 0x5A)) &* 0x0000_0100_0000_01B3
                }
            }
        }
        func mix(_ value: UInt64) -> UInt64 {
            var z = value &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        func hex(_ value: UInt64) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return "hg1-" + hex(mix(first ^ UInt64(ids.count))) + hex(mix(second))
    }
}

/// The native batch as a Codable value, for repositories written in Swift and for tests: the
/// body ``PayloadBuilder`` assembles decodes into it.
public struct NativeBatch: Codable, Sendable, Hashable {
    public var heartbeatSeries: [HeartbeatSeriesSample]
    public var samples: [QuantitySample]
    public var workouts: [Workout]

    public init(heartbeatSeries: [HeartbeatSeriesSample] = [], samples: [QuantitySample] = [], workouts: [Workout] = []) {
        self.heartbeatSeries = heartbeatSeries
        self.samples = samples
        self.workouts = workouts
    }
}
