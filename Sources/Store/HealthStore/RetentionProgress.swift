/// Where age-based pruning (`store.retentionDays`) stands: what went so far and where the next
/// batch resumes. Start with ``start`` and pass each batch's result to the next
/// (``HealthStore/pruneBatch(endingBefore:after:batchSize:)``) until ``isFinished``.
///
/// A value only: it holds no database resource, and a pass may be abandoned at any batch.
public struct RetentionProgress: Sendable, Hashable {
    /// Where the next batch resumes, in the order the store's indexes give.
    enum Position: Sendable, Hashable {
        /// Quantity samples of type id `typeID` after `(start, uuid)`.
        case samples(typeID: Int64, start: Int64, uuid: [UInt8])
        /// Quantity series of type id `typeID` after `(start, anchor)`.
        case quantitySeries(typeID: Int64, start: Int64, anchor: Int64)
        /// Heartbeat series after `(end, anchor)`.
        case series(end: Int64, anchor: Int64)
        /// Nothing is left to look at.
        case finished
    }

    /// Quantity samples pruned so far in this pass.
    public internal(set) var samplesPruned = 0
    /// Quantity series (each with its quantities) pruned so far in this pass.
    public internal(set) var quantitySeriesPruned = 0
    /// Heartbeat series (with their beats) pruned so far in this pass.
    public internal(set) var seriesPruned = 0
    /// Transactions (batches) run so far in this pass.
    public internal(set) var batches = 0
    /// Where the next batch resumes.
    var position: Position

    /// A pass that has not begun.
    public static let start = RetentionProgress(position: .samples(typeID: Int64.min, start: Int64.min, uuid: []))

    /// Whether every object older than the cutoff has been looked at.
    public var isFinished: Bool { position == .finished }
}
