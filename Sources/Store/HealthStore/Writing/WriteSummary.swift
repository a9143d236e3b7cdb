public import FoundationEssentials
import HealthModel

/// How one write changed the store.
public struct WriteSummary: Hashable, Sendable {
    /// Records stored for the first time.
    public var inserted = 0
    /// Records that replaced an older sync version of the same sync identifier.
    public var replaced = 0
    /// Records that changed nothing: stored already, or a version at least as new is.
    public var ignored = 0
    /// Records refused: one with the same sync identifier and version, saying something else
    /// (another type or value), is stored. Two readings the source gave one identity; the
    /// first stays, and the writer's caller says so.
    public var refused = 0
    /// The sync identifiers of the first ``refusedListLimit`` records refused, for the log.
    public var refusedIdentifiers: [String] = []
    /// How many refused identifiers a summary lists.
    public static let refusedListLimit = 8
    /// The latest end date among the records written.
    public var lastRecordDate: Date?
    /// The greatest anchor the store has handed out once the write committed.
    public var latestAnchor: Int64 = 0

    /// An empty summary.
    public init() {}

    /// Counts `record` as refused.
    mutating func refuse(_ record: HealthRecord) {
        refused += 1
        if refusedIdentifiers.count < Self.refusedListLimit, case .quantity(let sample) = record, let identifier = sample.syncIdentifier {
            refusedIdentifiers.append(identifier)
        }
    }
}
