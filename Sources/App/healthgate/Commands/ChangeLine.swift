import FoundationEssentials
import HealthModel
import HealthStore

/// The JSON of `query changes --format json`.
struct ChangeSet: Encodable {
    var anchor: Int64
    var hasMore: Bool
    var added: [ChangeLine]
    var deleted: [ChangeLine]

    init(_ changes: StoreChanges) {
        anchor = changes.anchor
        hasMore = changes.hasMore
        added = zip(changes.addedAnchors, changes.added).map { ChangeLine(anchor: $0, record: $1) }
        deleted = changes.deleted.map(ChangeLine.init(deletion:))
    }
}

/// One change as `--follow` prints it: an added record or a tombstone.
struct ChangeLine: Encodable {
    var anchor: Int64
    var change: String
    var record: HealthRecord?
    var uuid: String?
    var kind: String?
    var type: String?

    init(anchor: Int64, record: HealthRecord) {
        self.anchor = anchor
        change = "added"
        self.record = record
    }

    init(deletion: StoreChanges.Deletion) {
        anchor = deletion.anchor
        change = "deleted"
        uuid = deletion.id.uuidString
        kind = deletion.kind.rawValue
        type = deletion.type
    }

    /// The changes in anchor order, one compact JSON object each.
    static func lines(of changes: StoreChanges) throws -> [String] {
        let all = zip(changes.addedAnchors, changes.added).map { ChangeLine(anchor: $0, record: $1) }
            + changes.deleted.map(ChangeLine.init(deletion:))
        let encoder = HealthJSON.makeEncoder()
        return try all.sorted { $0.anchor < $1.anchor }.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
    }

    static func typeName(of record: HealthRecord) -> String {
        switch record {
        case .quantity(let sample): sample.type.identifier
        case .quantitySeries(let series): series.type.identifier
        case .correlation(let correlation): correlation.type.identifier
        case .heartbeatSeries: "heartbeatSeries"
        case .workout: "workout"
        }
    }

    static func startDate(of record: HealthRecord) -> Date {
        switch record {
        case .quantity(let sample): sample.startDate
        case .quantitySeries(let series): series.startDate
        case .correlation(let correlation): correlation.startDate
        case .heartbeatSeries(let series): series.startDate
        case .workout(let workout): workout.startDate
        }
    }
}
