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

/// A batch a follower sends: the changes of the log in (``after``, ``through``], in anchor
/// order, without those the receiver cannot carry.
///
/// The range is what is committed before the batch is first sent, so that a batch sent again
/// after a crash is rebuilt from the same range: the same changes in the same order, under the
/// same ``key``. Anchors are only ever handed out above the latest one, so a range can only
/// lose changes (an object deleted or stored again since moves to a later anchor), never gain
/// one. A rebuilt batch keeps the key it was first sent under (committed with its range), also
/// when it lost a change since: the receiver gets that change's later version, with its later
/// anchor, in a later batch.
public struct FollowerBatch: Sendable, Hashable {
    /// The anchor the batch starts after.
    public var after: Int64
    /// The anchor it ends at.
    public var through: Int64
    public var changes: [FollowedChange]
    /// The batch's identity: a digest of its changes' anchors and uuids (``BatchKey``). The
    /// HTTP sink sends it as `Idempotency-Key`.
    public var key: String

    /// A batch of `changes` under `key`, or under the digest of its changes when nil.
    public init(after: Int64, through: Int64, changes: [FollowedChange], key: String? = nil) {
        self.after = after
        self.through = through
        self.changes = changes
        self.key = key ?? BatchKey.key(for: changes)
    }

    /// The changes at `part` (indices into ``changes``) as a request of their own: the batch
    /// itself when `part` is all of it, else a batch with its own key (a half of a batch the
    /// receiver refused, split to find the refused change).
    public func part(_ part: Range<Int>) -> FollowerBatch {
        guard part != changes.indices else { return self }
        return FollowerBatch(after: after, through: through, changes: Array(changes[part]))
    }

    /// The objects stored (not the deletions), in order.
    public var records: [HealthRecord] {
        changes.compactMap { change in
            if case .stored(let record, _) = change { return record }
            return nil
        }
    }

    /// The deletions, in order.
    public var deletions: [StoreChanges.Deletion] {
        changes.compactMap { change in
            if case .deleted(let deletion) = change { return deletion }
            return nil
        }
    }
}

/// Batch identities: two independent 64-bit FNV-1a digests of each change's anchor, uuid and
/// kind of change, finalised with splitmix64. A de-duplication key, not a cryptographic hash:
/// the uuids make it unique across gateways, the anchors tell two versions of one object apart.
public enum BatchKey {
    public static func key(for changes: [FollowedChange]) -> String {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        func absorb(_ word: UInt64) {
            for shift in stride(from: 56, through: 0, by: -8) {
                let byte = (word >> UInt64(shift)) & 0xFF
                first = (first ^ byte) &* 0x0000_0100_0000_01B3
                second = (second ^ (byte ^ 0x5A)) &* 0x0000_0100_0000_01B3
            }
        }
        for change in changes {
            absorb(UInt64(bitPattern: change.anchor) << 1 | (change.isDeletion ? 1 : 0))
            let id = change.id
            absorb(id.high)
            absorb(id.low)
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
        return "hg2-" + hex(mix(first ^ UInt64(changes.count))) + hex(mix(second))
    }
}
