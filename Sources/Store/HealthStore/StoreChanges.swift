public import HealthModel

/// What changed in a store after an anchor: see ``SQLiteSampleStore/changes(since:type:limit:)``.
public struct StoreChanges: Hashable, Sendable {
    /// A deleted object: its uuid, kind and type, and the anchor of its deletion.
    public struct Deletion: Hashable, Sendable {
        /// The deleted object's uuid.
        public var id: SampleID
        /// Its kind (quantity sample, correlation, heartbeat series, workout).
        public var kind: HealthRecordKind
        /// Its type, as ``ChangeType/identifier`` names it.
        public var type: String
        /// The anchor of the deletion.
        public var anchor: Int64
        /// The deleted object's device as remote sinks name it (its local identifier, else its
        /// name); nil for a workout, an object without a device, or a deletion the store recorded
        /// before it kept devices with its tombstones.
        public var device: String?
        /// The deleted reading's person (``HealthModel/MetadataKey/person``); nil for nobody's, a
        /// workout, or a deletion the store recorded before it kept persons with its tombstones.
        public var person: String?

        /// A deletion record.
        public init(id: SampleID, kind: HealthRecordKind, type: String, anchor: Int64, device: String? = nil, person: String? = nil) {
            self.id = id
            self.kind = kind
            self.type = type
            self.anchor = anchor
            self.device = device
            self.person = person
        }
    }

    /// Objects stored (or grown, for a heartbeat series) after the anchor, in anchor order.
    public var added: [HealthRecord]
    /// The anchor of each of ``added``.
    public var addedAnchors: [Int64]
    /// Objects deleted after the anchor, in anchor order.
    public var deleted: [Deletion]
    /// The anchor to ask from next time: the greatest anchor returned, or the store's greatest
    /// anchor when the answer was not cut short by the limit.
    public var anchor: Int64
    /// Whether the limit cut the answer short: more changes follow ``anchor``.
    public var hasMore: Bool

    /// The uuids of ``deleted``.
    public var deletedIDs: [SampleID] { deleted.map(\.id) }

    /// A set of changes.
    public init(added: [HealthRecord], addedAnchors: [Int64], deleted: [Deletion], anchor: Int64, hasMore: Bool) {
        self.added = added
        self.addedAnchors = addedAnchors
        self.deleted = deleted
        self.anchor = anchor
        self.hasMore = hasMore
    }
}
