import SQLite

/// The tables age-based pruning walks, in the order it walks them, each with what its walk and
/// its deletion need: the table's name, the columns its walk is ordered by, when a record ended
/// and what else keeps one.
///
/// The names and expressions here are the only text the pruning's SQL takes from outside its
/// own literals: they come from this closed set, never from data. Every value (a cutoff, a type
/// id, a key, a span) is a bound parameter.
enum RetentionTable {
    case samples, quantitySeries, heartbeatSeries

    /// The table, and the qualifier of its columns.
    var name: String {
        switch self {
        case .samples: "samples"
        case .quantitySeries: "quantity_series"
        case .heartbeatSeries: "heartbeat_series"
        }
    }

    /// The columns a walk is ordered by (an index's): a time, then what tells records at the
    /// same time apart.
    var keyColumns: (time: String, tiebreaker: String) {
        switch self {
        case .samples: ("start_us", "uuid")
        case .quantitySeries: ("start_us", "anchor")
        case .heartbeatSeries: ("end_us", "anchor")
        }
    }

    /// Whether the walk goes a type at a time, through the table's `(type_id, start_us)` index:
    /// a record then ends within its type's longest span of its start, so one that ended before
    /// the cutoff started before it.
    var walksByType: Bool { self != .heartbeatSeries }

    /// When a record starts and ends, over the table's qualified columns.
    var span: (start: String, end: String) {
        switch self {
        case .samples: ("samples.start_us", "samples.start_us + samples.duration_us")
        case .quantitySeries: ("quantity_series.start_us", "quantity_series.end_us")
        case .heartbeatSeries: ("heartbeat_series.start_us", "heartbeat_series.end_us")
        }
    }

    /// What keeps a record of this table whatever its age: a correlation's member; a quantity
    /// series still open.
    var keptWhen: String {
        switch self {
        case .samples: "AND NOT EXISTS (SELECT 1 FROM correlation_members m WHERE m.sample_anchor = samples.anchor)"
        case .quantitySeries: "AND quantity_series.open = 0"
        case .heartbeatSeries: ""
        }
    }

    /// How many candidates a batch looks at. A series holds about a minute of readings (or
    /// beats) in one row: a batch looks at a twentieth as many series as samples.
    func candidateLimit(_ limit: Int64) -> Int64 {
        self == .samples ? limit : max(1, limit / 20)
    }

    /// What the walk counts this table's deletions into.
    var pruned: WritableKeyPath<RetentionProgress, Int> {
        switch self {
        case .samples: \.samplesPruned
        case .quantitySeries: \.quantitySeriesPruned
        case .heartbeatSeries: \.seriesPruned
        }
    }

    // MARK: SQL

    /// The first type stored at or after `?1`.
    var nextTypeSQL: String { "SELECT min(type_id) FROM \(name) WHERE type_id >= ?1" }

    /// The candidates: `?1` the type (when the walk goes by type), `?2` the cutoff, `?3, ?4` the
    /// key the walk resumes after (when `resuming`), `?5` the limit. Each row: the key, then the
    /// anchor.
    func candidatesSQL(resuming: Bool) -> String {
        let (time, tiebreaker) = keyColumns
        return """
            SELECT \(time), \(tiebreaker), anchor FROM \(name)
            WHERE \(walksByType ? "type_id = ?1 AND " : "")\(time) < ?2 \(resuming ? "AND (\(time), \(tiebreaker)) > (?3, ?4)" : "")
            ORDER BY \(time), \(tiebreaker) LIMIT ?5
            """
    }

    /// Deletes the candidates that may go: `?1` the slowest follower's cursor, `?2` the start
    /// of the oldest running workout, `?3` the cutoff; with `outsideWorkouts`, `?4` the longest
    /// stored workout's span, through `workouts_start`.
    func deleteSQL(outsideWorkouts: Bool) -> String {
        let (start, end) = span
        let workouts = """
            AND NOT EXISTS (SELECT 1 FROM workouts w WHERE w.start_us >= \(start) - ?4 AND w.start_us <= \(end)
                AND w.end_us >= \(start))
            """
        return """
            DELETE FROM \(name) WHERE anchor IN (SELECT anchor FROM temp.retention_candidates)
                AND anchor <= ?1 AND \(end) < ?2 AND \(end) < ?3
                \(keptWhen)
                \(outsideWorkouts ? workouts : "")
            """
    }

    /// What goes with the records deleted, in a table of its own: a sample's sync state. (A
    /// heartbeat series' beats go with it: in its blob, or, stored before version 15 and not
    /// moved yet, in `heartbeats`, which cascades on its series' uuid.)
    var orphansSQL: String? {
        guard self == .samples else { return nil }
        return """
            DELETE FROM sample_sync WHERE anchor IN (SELECT anchor FROM temp.retention_candidates)
                AND NOT EXISTS (SELECT 1 FROM samples s WHERE s.anchor = sample_sync.anchor)
            """
    }

    // MARK: Positions

    /// The table `position` walks, the type it is in (ignored when the walk does not go by
    /// type) and the key it resumes after, nil at a type's beginning; nil once finished.
    static func walk(at position: RetentionProgress.Position) -> (table: Self, typeID: Int64, after: [SQLiteValue]?)? {
        switch position {
        case .samples(let typeID, let start, let uuid):
            // An empty uuid is never stored: a new type begins without the row-value bound.
            (.samples, typeID, uuid.isEmpty ? nil : [.integer(start), .blob(uuid)])
        case .quantitySeries(let typeID, let start, let anchor): (.quantitySeries, typeID, [.integer(start), .integer(anchor)])
        case .series(let end, let anchor): (.heartbeatSeries, Int64.min, [.integer(end), .integer(anchor)])
        case .finished: nil
        }
    }

    /// Where the next batch resumes once this one looked at `rows` of type `typeID`: after the
    /// last one when the batch was full, else at the next type's beginning, else at the next
    /// table's.
    func position(after rows: [SQLiteRow], limit: Int64, typeID: Int64) -> RetentionProgress.Position {
        if let last = rows.last, Int64(rows.count) == limit, let time = last.integer(0) {
            switch self {
            case .samples: if let uuid = last.blob(1) { return .samples(typeID: typeID, start: time, uuid: uuid) }
            case .quantitySeries: if let anchor = last.integer(1) { return .quantitySeries(typeID: typeID, start: time, anchor: anchor) }
            case .heartbeatSeries: if let anchor = last.integer(1) { return .series(end: time, anchor: anchor) }
            }
        }
        if walksByType, typeID < Int64.max { return beginning(ofType: typeID + 1) }
        return following
    }

    /// Where the walk of this table begins at type `typeID`.
    func beginning(ofType typeID: Int64) -> RetentionProgress.Position {
        switch self {
        case .samples: .samples(typeID: typeID, start: Int64.min, uuid: [])
        case .quantitySeries: .quantitySeries(typeID: typeID, start: Int64.min, anchor: Int64.min)
        case .heartbeatSeries: .series(end: Int64.min, anchor: Int64.min)
        }
    }

    /// Where the walk goes once this table is done.
    var following: RetentionProgress.Position {
        switch self {
        case .samples: Self.quantitySeries.beginning(ofType: Int64.min)
        case .quantitySeries: Self.heartbeatSeries.beginning(ofType: Int64.min)
        case .heartbeatSeries: .finished
        }
    }
}
