public import Foundation
public import HealthModel

/// A record as every remote sink's outbox stores it: its sample in HealthJSON, the bytes an
/// HTTP body or an MQTT message carries unchanged.
public enum StoredPayload {
    /// The HealthJSON of `record` through `encoder`.
    public static func encode(_ record: HealthRecord, encoder: JSONEncoder) throws -> [UInt8] {
        switch record {
        case .quantity(let sample): Array(try encoder.encode(sample))
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
}
