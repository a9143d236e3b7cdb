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
/// store keeps the highest version, appending the beats that are new, so a crash loses only the
/// beats still in a sink's batch window; the finished version drops the mark. A series finished
/// before any provisional version was published gets a uuid of its own and no sync identifier.
public struct HeartbeatSeriesVersionTracker: Sendable {
    /// The uuid, sync identifier and last sync version of the series being built, once a
    /// provisional version of it was published.
    private struct Published: Sendable {
        var id: SampleID
        var identifier: String
        var version: Int64
    }

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

    /// `chunk`, the series being built as it stands, as its next provisional version: the same
    /// uuid and sync identifier as the versions before it, the next sync version and
    /// `healthgate.provisional`.
    /// - Throws: what ``HeartbeatSeriesSample`` throws for the chunk (a bug in the builder); the
    ///   version is then not counted as published.
    public mutating func provisional(
        _ chunk: HeartbeatSeriesBuilder.Chunk, device: Device?, metadata: Metadata
    ) throws(SampleError) -> HeartbeatSeriesSample {
        let next: Published
        if let previous = published {
            next = Published(id: previous.id, identifier: previous.identifier, version: previous.version + 1)
        } else {
            let start = Int64((chunk.start.timeIntervalSince1970 * 1_000_000).rounded())
            next = Published(id: ids.next(), identifier: "heartbeat-series:\(identity):\(start)", version: 1)
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
