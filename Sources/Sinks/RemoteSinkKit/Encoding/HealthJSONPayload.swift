public import FoundationEssentials
public import HealthModel

/// A record's sample in HealthJSON: the bytes an HTTP body or an MQTT message carries, and what
/// a dead letter keeps.
public enum HealthJSONPayload {
    /// The HealthJSON of `record` through `encoder`.
    public static func encode(_ record: HealthRecord, encoder: JSONEncoder) throws -> [UInt8] {
        switch record {
        case .quantity(let sample): Array(try encoder.encode(sample))
        case .quantitySeries(let series): Array(try encoder.encode(series))
        case .heartbeatSeries(let series): Array(try encoder.encode(series))
        case .workout(let workout): Array(try encoder.encode(workout))
        case .correlation(let correlation): Array(try encoder.encode(correlation))
        }
    }

    /// The same bytes, through the hand-written writer where it applies (several times faster;
    /// see ``QuantitySampleJSONWriter``).
    public static func encode(_ record: HealthRecord, encoder: JSONEncoder, writer: inout QuantitySampleJSONWriter) throws -> [UInt8] {
        if case .quantity(let sample) = record, let bytes = writer.encode(sample) { return bytes }
        return try encode(record, encoder: encoder)
    }

    /// The record of `kind` that `bytes` encode.
    public static func decode(_ bytes: [UInt8], kind: HealthRecordKind, decoder: JSONDecoder) throws -> HealthRecord {
        let data = Data(bytes)
        return switch kind {
        case .quantity: .quantity(try decoder.decode(QuantitySample.self, from: data))
        case .quantitySeries: .quantitySeries(try decoder.decode(QuantitySeriesSample.self, from: data))
        case .heartbeatSeries: .heartbeatSeries(try decoder.decode(HeartbeatSeriesSample.self, from: data))
        case .workout: .workout(try decoder.decode(Workout.self, from: data))
        case .correlation: .correlation(try decoder.decode(CorrelationSample.self, from: data))
        }
    }
}
