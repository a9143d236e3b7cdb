public import HealthModel
public import HealthStore

/// One change of the store's log as a follower sends it: an object in its current version, or
/// a deletion.
public enum FollowedChange: Sendable, Hashable {
    /// An object stored, or stored again in a new version (a grown heartbeat series, a higher
    /// sync version), at `anchor`.
    case stored(HealthRecord, anchor: Int64)
    /// An object deleted, at the deletion's anchor.
    case deleted(StoreChanges.Deletion)

    /// The change's anchor in the log.
    public var anchor: Int64 {
        switch self {
        case .stored(_, let anchor): anchor
        case .deleted(let deletion): deletion.anchor
        }
    }

    /// The object's uuid.
    public var id: SampleID {
        switch self {
        case .stored(let record, _): record.id
        case .deleted(let deletion): deletion.id
        }
    }

    /// The object's kind.
    public var kind: HealthRecordKind {
        switch self {
        case .stored(let record, _): record.kind
        case .deleted(let deletion): deletion.kind
        }
    }

    /// The object's type, as ``ChangeType/identifier`` names it (`heartRate`, `bloodPressure`,
    /// `heartbeatSeries`, `workout`).
    public var typeIdentifier: String {
        switch self {
        case .stored(let record, _): record.typeIdentifier
        case .deleted(let deletion): deletion.type
        }
    }

    /// Whether this is a deletion.
    public var isDeletion: Bool {
        if case .deleted = self { return true }
        return false
    }

    /// The changes of one page of the log, in anchor order (objects and deletions merged).
    public static func changes(of page: StoreChanges) -> [FollowedChange] {
        var merged: [FollowedChange] = []
        merged.reserveCapacity(page.added.count + page.deleted.count)
        var deletions = page.deleted[...]
        for (record, anchor) in zip(page.added, page.addedAnchors) {
            while let next = deletions.first, next.anchor < anchor {
                merged.append(.deleted(next))
                deletions = deletions.dropFirst()
            }
            merged.append(.stored(record, anchor: anchor))
        }
        merged.append(contentsOf: deletions.map(FollowedChange.deleted))
        return merged
    }
}
