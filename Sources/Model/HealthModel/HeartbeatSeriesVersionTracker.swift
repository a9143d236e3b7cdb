import FoundationEssentials

/// The versions one device's heartbeat series are published under: each series as it grows
/// (``HeartbeatSeriesBuilder/pendingChunk``) as provisional versions, then finished (a chunk the
/// builder cut) as the version that replaces them. Every heart-rate source that publishes its
/// series as they grow keeps one per device (or connection) beside its builder. Pure apart from
/// drawing sample ids.
///
/// The versions of one series share a uuid and a sync identifier
/// (`heartbeat-series:<identity>:<start in µs>`) with a rising ``Metadata/syncVersion``
/// (HealthKit's sync-identifier rule); the provisional ones carry `healthgate.provisional`. A
/// store keeps the highest version, appending the beats that are new; the finished version drops
/// the mark. A series finished before any provisional version was published gets a uuid of its
/// own and no sync identifier.
///
/// Cadence: a series' first provisional version is published at once (the series exists from its
/// first beats: a workout ending now counts it), the next ones each time its last beat enters a
/// new ``provisionalSlot`` of the clock (seconds since 1970, so every device's versions fall due
/// together). A version rewrites the series' row and its index entries, so one per device per
/// beat was half of what a class wrote to the card (issue 64); a slot for all devices costs one
/// commit's rewrite a slot. A power cut loses the beats since the last slot (10 s), and the
/// batch window's; never a heart rate (README, "Power cuts and hangs").
public struct HeartbeatSeriesVersionTracker: Sendable {
    /// The uuid, sync identifier and last sync version of the series being built, once a
    /// provisional version of it was published.
    private struct Published: Sendable {
        var id: SampleID
        var identifier: String
        var version: Int64
        /// The slot the version's last beat fell in.
        var slot: Double
    }

    /// How long a slot of the provisional versions' cadence is, in seconds: 10.
    public static let provisionalSlot: Double = 10

    /// Names the device in sync identifiers: with a series' start it identifies the series (a
    /// chunk's start never moves, and one device starts no two series at the same microsecond).
    public let identity: String
    private let ids: SampleIDGenerator
    private var published: Published?

    /// A tracker for the series of the device `identity` (its local identifier), drawing uuids
    /// from `ids`.
    public init(identity: String, ids: SampleIDGenerator) {
        self.identity = identity
        self.ids = ids
    }

    /// The finished version of `chunk`: after provisional versions, their uuid and sync
    /// identifier with the next sync version, so it replaces them; otherwise a new uuid. The next
    /// provisional version starts a new series, also when this one is rejected.
    /// - Throws: what ``HeartbeatSeriesSample`` throws for the chunk (a bug in the builder).
    public mutating func finished(
        _ chunk: HeartbeatSeriesBuilder.Chunk, device: Device?, metadata: Metadata
    ) throws(SampleError) -> HeartbeatSeriesSample {
        var metadata = metadata
        let id: SampleID
        if let provisional = published {
            id = provisional.id
            metadata.syncIdentifier = provisional.identifier
            metadata.syncVersion = provisional.version + 1
            published = nil
        } else {
            id = ids.next()
        }
        return try HeartbeatSeriesSample(id: id, start: chunk.start, end: chunk.end, beats: chunk.beats, device: device, metadata: metadata)
    }

    /// `chunk`, the series being built as it stands, as its next provisional version when one is
    /// due (see the cadence above), else nil: the same uuid and sync identifier as the versions
    /// before it, the next sync version and `healthgate.provisional`.
    /// - Throws: what ``HeartbeatSeriesSample`` throws for the chunk (a bug in the builder); the
    ///   version is then not counted as published.
    public mutating func provisional(
        _ chunk: HeartbeatSeriesBuilder.Chunk, device: Device?, metadata: Metadata
    ) throws(SampleError) -> HeartbeatSeriesSample? {
        let slot = (chunk.end.timeIntervalSince1970 / Self.provisionalSlot).rounded(.down)
        let next: Published
        if let previous = published {
            guard slot > previous.slot else { return nil }
            next = Published(id: previous.id, identifier: previous.identifier, version: previous.version + 1, slot: slot)
        } else {
            let start = Int64((chunk.start.timeIntervalSince1970 * 1_000_000).rounded())
            next = Published(id: ids.next(), identifier: "heartbeat-series:\(identity):\(start)", version: 1, slot: slot)
        }
        var metadata = metadata
        metadata.syncIdentifier = next.identifier
        metadata.syncVersion = next.version
        metadata[.provisional] = .bool(true)
        let sample = try HeartbeatSeriesSample(
            id: next.id, start: chunk.start, end: chunk.end, beats: chunk.beats, device: device, metadata: metadata)
        published = next
        return sample
    }
}
