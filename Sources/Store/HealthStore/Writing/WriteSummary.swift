public import FoundationEssentials

/// How one write changed the store.
public struct WriteSummary: Hashable, Sendable {
    /// Records stored for the first time.
    public var inserted = 0
    /// Records that replaced an older sync version of the same sync identifier.
    public var replaced = 0
    /// Records that changed nothing: stored already, or a version at least as new is.
    public var ignored = 0
    /// The latest end date among the records written.
    public var lastRecordDate: Date?
    /// The greatest anchor the store has handed out once the write committed.
    public var latestAnchor: Int64 = 0

    /// An empty summary.
    public init() {}
}
