import HealthModel

/// What the store keeps of the change log once every follower (a remote sink) acknowledged it.
public enum LogRetention: Sendable, Hashable {
    /// Everything: the store is the gateway's database (a `sqlite` sink is configured), queried
    /// and kept until deleted.
    case everything
    /// Only what a follower has not acknowledged, plus what a running workout still reads: the
    /// store is the remote sinks' journal and does not grow with the data sent (a gateway
    /// configured with remote sinks alone).
    case untilAcknowledged

    /// The bytes a record is estimated to take in the store, for the followers' `maxBytes`:
    /// the row and its index entry (about 80 bytes a quantity sample), and the child rows of the
    /// other kinds.
    static func estimatedBytes(of record: HealthRecord) -> Int {
        switch record {
        case .quantity(let sample): 80 + 40 * sample.metadata.count
        case .quantitySeries(let series): quantitySeriesBytes(count: series.count)
        case .correlation(let correlation): 96 + 80 * correlation.objects.count
        case .heartbeatSeries(let series): 96 + 12 * series.beats.count
        case .workout(let workout): 256 + 48 * (workout.events.count + workout.activities.count + workout.statistics.count)
        }
    }

    /// A quantity series' estimated bytes: its row, its index entries and a few bytes a quantity.
    static func quantitySeriesBytes(count: Int) -> Int { 96 + 3 * count }

    /// A tombstone's estimated bytes.
    static let tombstoneBytes = 48
}
