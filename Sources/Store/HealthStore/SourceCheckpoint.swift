public import FoundationEssentials

/// A source's resumable state, published together with the records it covers: for example a
/// pedometer's last counter reading per device.
///
/// A checkpoint travels on the bus with the records published beside it (the bus's
/// `SamplePublisher.publish(_:checkpoint:)`), and the store commits it in the same transaction
/// as those records (``HealthStore/write(_:checkpoints:)``), so after a crash the stored
/// checkpoint and the stored records always agree: a source that resumes from it neither loses
/// nor counts anything twice.
///
/// Identity: `namespace` (the source's kind, e.g. `serial-pedometer`) and `key` (what the source
/// resumes by, e.g. the device's serial number). Instance names are deliberately not part of the
/// identity, so that a device that moves between two sources of the same kind keeps its state.
/// A later checkpoint with the same identity replaces an earlier one.
public struct SourceCheckpoint: Hashable, Sendable {
    /// The source kind that owns the checkpoint, e.g. `serial-pedometer`.
    public var namespace: String
    /// What the source resumes by, unique within the namespace, e.g. a device serial number.
    public var key: String
    /// The state itself, encoded by the source (JSON in practice); opaque to the bus and the store.
    public var payload: Data

    /// A checkpoint of `payload` for `key` in `namespace`.
    public init(namespace: String, key: String, payload: Data) {
        self.namespace = namespace
        self.key = key
        self.payload = payload
    }

    /// The identity a later checkpoint replaces.
    public var identity: SourceCheckpointIdentity {
        SourceCheckpointIdentity(namespace: namespace, key: key)
    }
}

/// The identity of a ``SourceCheckpoint``: namespace and key.
public struct SourceCheckpointIdentity: Hashable, Sendable {
    /// The source kind.
    public var namespace: String
    /// The source-defined key.
    public var key: String

    /// The identity of `key` in `namespace`.
    public init(namespace: String, key: String) {
        self.namespace = namespace
        self.key = key
    }
}

/// Reads checkpoints back: what a durable sink committed, so that a source resumes after a
/// restart.
///
/// Contract: returns the newest committed checkpoint with that identity, or nil when there is
/// none. Implementations must not block the cooperative pool (the SQLite one reads on its own
/// serial queue). Errors are thrown, never swallowed: the caller decides whether to continue
/// from a new baseline.
public protocol SourceCheckpointReader: Sendable {
    /// The newest committed checkpoint for `key` in `namespace`, or nil.
    func checkpoint(namespace: String, key: String) async throws -> SourceCheckpoint?

    /// The newest checkpoint for `key` in `namespace` that is on stable storage, or nil: what a
    /// source may act on irreversibly (erase a device's memory of what it covers). A reader that
    /// also answers with checkpoints only published (``checkpoint(namespace:key:)`` of the bus's
    /// ledger) answers here only with the durable sink's.
    func committedCheckpoint(namespace: String, key: String) async throws -> SourceCheckpoint?
}

extension SourceCheckpointReader {
    /// A store's checkpoints are all committed: the same answer.
    public func committedCheckpoint(namespace: String, key: String) async throws -> SourceCheckpoint? {
        try await checkpoint(namespace: namespace, key: key)
    }
}
