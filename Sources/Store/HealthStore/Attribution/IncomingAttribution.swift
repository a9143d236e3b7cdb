import FoundationEssentials
import HealthModel
import Synchronization

/// What the store's writer attributes the readings it commits by, and what it remembers between
/// transactions (RecordWriter+Attributing.swift).
///
/// The rules are read from the store inside the transaction that stores the readings, so they
/// are exactly those committed before it: the wear intervals, the erasures, and the people the
/// gateway gave it (``roster``, from the configuration). They are read again when another
/// connection committed since (`PRAGMA data_version`: a `participant erase` in another
/// process), or when this writer changed them itself (``isCurrent`` false).
struct IncomingAttribution {
    /// The configured people.
    var roster = AttributionRoster()
    /// The attribution as last read, with what it learnt since (reference weights, weighings).
    var attribution = ReadingAttribution(rules: PersonAttribution())
    /// Whether ``attribution`` has the rules committed at ``dataVersion``.
    var isCurrent = false
    /// The `PRAGMA data_version` the rules were read at.
    var dataVersion: Int64?
}

/// What the writer's attribution did and decides by, readable from any thread: the writer adds
/// each committed transaction's counts, and its attribution once it changed.
final class CommittedAttribution: Sendable {
    private let state = Mutex((counts: AttributionCounts(), attribution: ReadingAttribution?.none))

    /// The counts since the store was opened.
    var counts: AttributionCounts { state.withLock { $0.counts } }
    /// The attribution of the latest commit; nil before the first.
    var attribution: ReadingAttribution? { state.withLock { $0.attribution } }

    func add(_ counts: AttributionCounts, attribution: ReadingAttribution?) {
        state.withLock { state in
            state.counts.add(counts)
            if let attribution { state.attribution = attribution }
        }
    }
}
