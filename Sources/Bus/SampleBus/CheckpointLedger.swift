public import HealthStore
import Synchronization

/// The checkpoint view a source reads: the newest checkpoint published in this process, else the
/// newest one a durable sink committed.
///
/// Why both: a checkpoint published a moment ago may still wait in a sink's batch window. A
/// device that moves from one source to another within that window must continue from the
/// published state, not from the older committed one, or the interval in between is counted
/// twice. The published state is always at least as new as the committed one, and if the
/// process dies before the commit both are lost together, so reading the published one first
/// never disagrees with the store after a restart.
///
/// Without a durable reader (no sink stores checkpoints), sources still share state within one
/// run, but nothing is resumed after a restart.
///
/// Memory: one entry per checkpoint identity ever published (a pedometer: one per device).
/// Thread-safe (a `Mutex`).
public final class CheckpointLedger: SourceCheckpointReader {
    private let published = Mutex<[SourceCheckpointIdentity: SourceCheckpoint]>([:])
    private let durable: (any SourceCheckpointReader)?

    /// A ledger over `durable`, the reader of the sink that stores checkpoints (nil for none).
    public init(durable: (any SourceCheckpointReader)?) {
        self.durable = durable
    }

    /// Whether checkpoints survive a restart (a sink stores them).
    public var isDurable: Bool { durable != nil }

    /// Notes a checkpoint as published. Called by the bus before the checkpoint is queued.
    func record(_ checkpoint: SourceCheckpoint) {
        published.withLock { $0[checkpoint.identity] = checkpoint }
    }

    /// The durable sink's newest committed checkpoint only (nil without such a sink): what a
    /// source may act on irreversibly.
    public func committedCheckpoint(namespace: String, key: String) async throws -> SourceCheckpoint? {
        try await durable?.checkpoint(namespace: namespace, key: key)
    }

    /// The newest published checkpoint, else the durable reader's; see the type's documentation.
    public func checkpoint(namespace: String, key: String) async throws -> SourceCheckpoint? {
        let identity = SourceCheckpointIdentity(namespace: namespace, key: key)
        if let latest = published.withLock({ $0[identity] }) { return latest }
        return try await durable?.checkpoint(namespace: namespace, key: key)
    }
}
