public import FoundationEssentials
public import HealthStore
public import HealthModel

/// Where a strap's beats stand in the store: a source checkpoint committed with the records of
/// every broadcast that carried a new beat, so after a crash the source continues each strap
/// after the last beat the store holds.
///
/// Identity: namespace `ant-heart-rate`, the strap's identifier (`ant:120:863436`) as key (the
/// strap, not the stick or the source instance). Payload: JSON with the last beat's event time
/// and count as the strap sent them, the date the series placed it at, and when the broadcast
/// carrying it arrived (seconds since 1970).
public struct StrapCheckpoint: Codable, Hashable, Sendable {
    /// The checkpoint namespace: the source's kind.
    public static let namespace = "ant-heart-rate"

    /// The last stored beat's event time (1/1024 s, as sent).
    public var beatTime: UInt16
    /// The beat count after it.
    public var beatCount: UInt8
    /// The date of the last beat placed in a heartbeat series, if any.
    public var lastBeat: Date?
    /// When the broadcast carrying the beat arrived.
    public var received: Date

    /// A checkpoint state.
    public init(beatTime: UInt16, beatCount: UInt8, lastBeat: Date?, received: Date) {
        self.beatTime = beatTime
        self.beatCount = beatCount
        self.lastBeat = lastBeat
        self.received = received
    }

    /// The checkpoint for the strap `key`: the JSON `JSONEncoder` would write with
    /// `.secondsSince1970` dates, written by ``HealthModel/JSONByteWriter``: a checkpoint goes
    /// with every beat of every strap, and `JSONEncoder`'s containers cost more than the text.
    public func checkpoint(key: String) throws(JSONByteWriter.Refusal) -> SourceCheckpoint {
        var writer = JSONByteWriter(capacity: 96)
        writer.openObject()
        writer.key(CodingKeys.beatCount.stringValue)
        writer.integer(Int(beatCount))
        writer.key(CodingKeys.beatTime.stringValue)
        writer.integer(Int(beatTime))
        if let lastBeat {
            writer.key(CodingKeys.lastBeat.stringValue)
            try writer.number(lastBeat.timeIntervalSince1970)
        }
        writer.key(CodingKeys.received.stringValue)
        try writer.number(received.timeIntervalSince1970)
        writer.closeObject()
        return SourceCheckpoint(namespace: Self.namespace, key: key, payload: Data(writer.bytes))
    }

    /// The state a checkpoint holds.
    public init(_ checkpoint: SourceCheckpoint) throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        self = try decoder.decode(Self.self, from: checkpoint.payload)
    }
}
