public import HealthStore
import FoundationEssentials

/// A device's counter baseline as a source checkpoint: what the serial pedometer publishes with
/// every reading and reads back when a device identifies itself.
///
/// Identity: namespace `serial-pedometer` and the device's identity as key (the serial number
/// from HGP/1's `ID` line; the transport's identity, such as the path, only for a device that
/// never answers the identification request). The key names the device, not the port or the
/// source instance, so a pedometer moved to another port or source continues its count.
///
/// Payload: JSON `{"steps":…,"distanceMeters":…,"date":…}` with the date in seconds since
/// 1970 (a Double: sub-microsecond resolution today, so the interval a restart resumes from is
/// the one stored).
public enum CounterCheckpoint {
    /// The checkpoint namespace: the source's kind.
    public static let namespace = "serial-pedometer"

    /// A payload that is not a counter state.
    public struct DecodingError: Error, Sendable, CustomStringConvertible {
        /// The checkpoint key.
        public var key: String
        /// What the JSON decoder said.
        public var reason: String
        public var description: String { "counter checkpoint \(key): \(reason)" }
    }

    /// The checkpoint holding `state` for the device `key`.
    /// - Throws: `EncodingError` for a state that JSON cannot hold (a non-finite distance).
    public static func make(_ state: StepCounterState, key: String) throws -> SourceCheckpoint {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return SourceCheckpoint(namespace: namespace, key: key, payload: try encoder.encode(state))
    }

    /// The counter state a checkpoint holds.
    public static func state(in checkpoint: SourceCheckpoint) throws(DecodingError) -> StepCounterState {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do {
            return try decoder.decode(StepCounterState.self, from: checkpoint.payload)
        } catch {
            throw DecodingError(key: checkpoint.key, reason: "\(error)")
        }
    }
}
