import FoundationEssentials
import HealthModel
import SQLite

// Age-based pruning (`store.retentionDays`): quantity samples, quantity series and heartbeat
// series that ended before a cutoff are deleted, without tombstones (the data is not withdrawn from where it was
// sent, the box only stops keeping it), in batches of a bounded number of candidates, each in a
// transaction of its own so that the writer is never held for more than one batch.
extension RecordWriter {
    /// Looks at up to `batchSize` candidates after `progress`'s position, in ONE immediate
    /// transaction, and deletes those that may go: ended before `cutoff`; at or below every
    /// follower's cursor (a remote sink that has not sent an object yet still gets it, as
    /// ``LogRetention/untilAcknowledged`` already does); ended before the oldest running workout
    /// began (the workout reads its samples back when it ends); not a correlation's member; with
    /// `keepWorkoutRecords`, not within a stored workout's time; a quantity series not still
    /// open.
    /// - Returns: `progress` advanced past the candidates looked at.
    func pruneBatch(
        endingBefore cutoff: Date, after progress: RetentionProgress, batchSize: Int, keepWorkoutRecords: Bool = false
    ) throws(StoreError) -> RetentionProgress {
        let limit = Int64(max(1, batchSize))
        let cutoffMicroseconds = StoreTime.microseconds(cutoff)
        return try transaction { () throws -> RetentionProgress in
            var next = progress
            next.batches += 1
            let slowest = try connection.query("SELECT min(anchor) FROM followers").first?.integer(0) ?? Int64.max
            let keepAfter = try connection.query(
                "SELECT min(at_us) FROM live_workout_events WHERE action = 'start'").first?.integer(0) ?? Int64.max
            try connection.execute("""
                CREATE TEMP TABLE IF NOT EXISTS retention_candidates (anchor INTEGER PRIMARY KEY);
                DELETE FROM temp.retention_candidates;
                """)
            // With keepWorkoutRecords: not within a stored workout, found through workouts_start
            // from as far back as the longest workout reaches.
            let longest = keepWorkoutRecords
                ? try connection.query("SELECT ifnull(max(end_us - start_us), 0) FROM workouts").first?.integer(0) ?? 0 : 0
            func outsideWorkouts(_ start: String, _ end: String) -> String {
                guard keepWorkoutRecords else { return "" }
                return """
                     AND NOT EXISTS (SELECT 1 FROM workouts w WHERE w.start_us >= \(start) - \(longest) AND w.start_us <= \(end)
                        AND w.end_us >= \(start))
                    """
            }
            switch progress.position {
            case .samples(let typeID, let start, let uuid):
                // The type to look at: this one, or the next stored (through samples_type_start).
                guard let current = try connection.query(
                    "SELECT min(type_id) FROM samples WHERE type_id >= ?1", [.integer(typeID)]).first?.integer(0)
                else {
                    next.position = .quantitySeries(typeID: Int64.min, start: Int64.min, anchor: Int64.min)
                    return next
                }
                // Within the type where the last batch stopped, after its last candidate.
                // (An empty uuid is never stored: a new type begins without the row-value bound.)
                let resumes = current == typeID && !uuid.isEmpty
                let rows = try connection.query(
                    """
                    SELECT start_us, uuid, anchor FROM samples
                    WHERE type_id = ?1 AND start_us < ?2 \(resumes ? "AND (start_us, uuid) > (?4, ?5)" : "")
                    ORDER BY start_us, uuid LIMIT ?3
                    """,
                    [.integer(current), .integer(cutoffMicroseconds), .integer(limit)]
                        + (resumes ? [.integer(start), .blob(uuid)] : []))
                if let last = rows.last, Int64(rows.count) == limit, let lastStart = last.integer(0), let lastUUID = last.blob(1) {
                    next.position = .samples(typeID: current, start: lastStart, uuid: lastUUID)
                } else if current < Int64.max {
                    next.position = .samples(typeID: current + 1, start: Int64.min, uuid: [])
                } else {
                    next.position = .quantitySeries(typeID: Int64.min, start: Int64.min, anchor: Int64.min)
                }
                let insert = try connection.statement("INSERT INTO temp.retention_candidates (anchor) VALUES (?1)")
                for row in rows {
                    guard let anchor = row.integer(2) else { continue }
                    insert.bind(anchor, at: 1)
                    try insert.runAndReset()
                }
                next.samplesPruned += try connection.run(
                    """
                    DELETE FROM samples WHERE anchor IN (SELECT anchor FROM temp.retention_candidates)
                        AND anchor <= ?1 AND start_us + duration_us < ?2 AND start_us + duration_us < ?3
                        AND NOT EXISTS (SELECT 1 FROM correlation_members m WHERE m.sample_anchor = samples.anchor)
                        \(outsideWorkouts("samples.start_us", "samples.start_us + samples.duration_us"))
                    """,
                    [.integer(slowest), .integer(keepAfter), .integer(cutoffMicroseconds)])
                try connection.run(
                    """
                    DELETE FROM sample_sync WHERE anchor IN (SELECT anchor FROM temp.retention_candidates)
                        AND NOT EXISTS (SELECT 1 FROM samples s WHERE s.anchor = sample_sync.anchor)
                    """)
            case .quantitySeries(let typeID, let start, let anchor):
                // Through quantity_series_type_start, a type at a time, as the samples: a series
                // ends within its type's longest span of its start, so one that ended before the
                // cutoff started before it. A series holds about a minute of readings in one
                // row: a batch looks at a twentieth as many series as samples.
                let seriesLimit = max(1, limit / 20)
                guard let current = try connection.query(
                    "SELECT min(type_id) FROM quantity_series WHERE type_id >= ?1", [.integer(typeID)]).first?.integer(0)
                else {
                    next.position = .series(end: Int64.min, anchor: Int64.min)
                    return next
                }
                let resumes = current == typeID
                let rows = try connection.query(
                    """
                    SELECT start_us, anchor FROM quantity_series
                    WHERE type_id = ?1 AND start_us < ?2 \(resumes ? "AND (start_us, anchor) > (?4, ?5)" : "")
                    ORDER BY start_us, anchor LIMIT ?3
                    """,
                    [.integer(current), .integer(cutoffMicroseconds), .integer(seriesLimit)]
                        + (resumes ? [.integer(start), .integer(anchor)] : []))
                if let last = rows.last, Int64(rows.count) == seriesLimit, let lastStart = last.integer(0), let lastAnchor = last.integer(1) {
                    next.position = .quantitySeries(typeID: current, start: lastStart, anchor: lastAnchor)
                } else if current < Int64.max {
                    next.position = .quantitySeries(typeID: current + 1, start: Int64.min, anchor: Int64.min)
                } else {
                    next.position = .series(end: Int64.min, anchor: Int64.min)
                }
                let insert = try connection.statement("INSERT INTO temp.retention_candidates (anchor) VALUES (?1)")
                for row in rows {
                    guard let anchor = row.integer(1) else { continue }
                    insert.bind(anchor, at: 1)
                    try insert.runAndReset()
                }
                next.quantitySeriesPruned += try connection.run(
                    """
                    DELETE FROM quantity_series WHERE anchor IN (SELECT anchor FROM temp.retention_candidates)
                        AND anchor <= ?1 AND end_us < ?2 AND end_us < ?3 AND open = 0
                        \(outsideWorkouts("quantity_series.start_us", "quantity_series.end_us"))
                    """,
                    [.integer(slowest), .integer(keepAfter), .integer(cutoffMicroseconds)])
            case .series(let end, let anchor):
                // A series carries about a minute of beats, so a batch looks at a twentieth as
                // many series as samples.
                let seriesLimit = max(1, limit / 20)
                let rows = try connection.query(
                    """
                    SELECT end_us, anchor FROM heartbeat_series WHERE end_us < ?3 AND (end_us, anchor) > (?1, ?2)
                    ORDER BY end_us, anchor LIMIT ?4
                    """,
                    [.integer(end), .integer(anchor), .integer(cutoffMicroseconds), .integer(seriesLimit)])
                if let last = rows.last, Int64(rows.count) == seriesLimit, let lastEnd = last.integer(0), let lastAnchor = last.integer(1) {
                    next.position = .series(end: lastEnd, anchor: lastAnchor)
                } else {
                    next.position = .finished
                }
                let insert = try connection.statement("INSERT INTO temp.retention_candidates (anchor) VALUES (?1)")
                for row in rows {
                    guard let anchor = row.integer(1) else { continue }
                    insert.bind(anchor, at: 1)
                    try insert.runAndReset()
                }
                // The beats go with their series: in its blob, or (stored before version 15 and
                // not moved yet) in `heartbeats`, which cascades on its series' uuid.
                next.seriesPruned += try connection.run(
                    """
                    DELETE FROM heartbeat_series WHERE anchor IN (SELECT anchor FROM temp.retention_candidates)
                        AND anchor <= ?1 AND end_us < ?2
                        \(outsideWorkouts("heartbeat_series.start_us", "heartbeat_series.end_us"))
                    """,
                    [.integer(slowest), .integer(keepAfter)])
            case .finished:
                break
            }
            return next
        }
    }
}
