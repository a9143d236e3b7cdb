public import HealthModel
public import HealthStore

/// A batch a follower sends: the changes of the log in (``after``, ``through``], in anchor
/// order, without those the receiver cannot carry, under the key that names its payload.
///
/// **One key names one payload.** The key is derived from what the batch carries (``BatchKey``:
/// the receiver's ``payloadIdentity`` and each change's anchor, uuid and kind), never kept
/// beside it, so no key can be attached to other changes or other settings.
///
/// The range is committed before the batch is first sent, so a batch sent again after a stop or
/// a crash is rebuilt from the same range. Anchors are only ever handed out above the latest
/// one, so a range can only lose changes (an object deleted or stored again since moves to a
/// later anchor), never gain one. A rebuilt batch that carries the same changes to a receiver
/// configured the same way is the same request under the same key; one that lost a change, or
/// whose receiver's settings changed, is another request under another key, and the receiver
/// gets the lost change's later version in a later batch.
public struct FollowerBatch: Sendable, Hashable {
    /// The anchor the batch starts after.
    public let after: Int64
    /// The anchor it ends at.
    public let through: Int64
    public let changes: [FollowedChange]
    /// What besides its changes shapes the receiver's request (``RemoteReceiver/payloadIdentity``).
    public let payloadIdentity: String
    /// The batch's identity: the digest of its payload identity and its changes (``BatchKey``).
    /// The HTTP sink sends it as `Idempotency-Key`.
    public let key: String

    /// A batch of `changes` for a receiver whose payload identity is `payloadIdentity`.
    public init(after: Int64, through: Int64, changes: [FollowedChange], payloadIdentity: String) {
        self.after = after
        self.through = through
        self.changes = changes
        self.payloadIdentity = payloadIdentity
        self.key = BatchKey.key(for: changes, payloadIdentity: payloadIdentity)
    }

    /// The changes at `part` (indices into ``changes``) as a request of their own: the batch
    /// itself when `part` is all of it, else a batch with its own key (a half of a batch the
    /// receiver refused, split to find the refused change).
    public func part(_ part: Range<Int>) -> FollowerBatch {
        guard part != changes.indices else { return self }
        return FollowerBatch(after: after, through: through, changes: Array(changes[part]), payloadIdentity: payloadIdentity)
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
