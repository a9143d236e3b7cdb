import FoundationEssentials
import HealthModel
import SQLite

// Age-based pruning (`store.retentionDays`): quantity samples and heartbeat series that ended
// before a cutoff are deleted, without tombstones (the data is not withdrawn from where it was
// sent, the box only stops keeping it), in batches of a bounded number of candidates, each in a
// transaction of its own so that the writer is never held for more than one batch.
extension RecordWriter {
    /// Looks at up to `batchSize` candidates after `progress`'s position, in ONE immediate
    /// transaction, and deletes those that may go: ended before `cutoff`; at or below every
    /// follower's cursor (a remote sink that has not sent an object yet still gets it, as
    /// ``LogRetention/untilAcknowledged`` already does); ended before the oldest running workout
    /// began (the workout reads its samples back when it ends); not linked to a stored workout
    /// (`workout_samples`: a workout keeps its samples and series); not a correlation's member.
    /// - Returns: `progress` advanced past the candidates looked at.
    func pruneBatch(
        endingBefore cutoff: Date, after progress: RetentionProgress, batchSize: Int
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
            switch progress.position {
            case .samples(let typeID, let start, let uuid):
                // The type to look at: this one, or the next stored (through samples_type_start).
                guard let current = try connection.query(
                    "SELECT min(type_id) FROM samples WHERE type_id >= ?1", [.integer(typeID)]).first?.integer(0)
                else {
                    next.position = .series(end: Int64.min, anchor: Int64.min)
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
                    next.position = .series(end: Int64.min, anchor: Int64.min)
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
                        AND NOT EXISTS (SELECT 1 FROM workout_samples w WHERE w.sample_uuid = samples.uuid)
                        AND NOT EXISTS (SELECT 1 FROM correlation_members m WHERE m.sample_anchor = samples.anchor)
                    """,
                    [.integer(slowest), .integer(keepAfter), .integer(cutoffMicroseconds)])
                try connection.run(
                    """
                    DELETE FROM sample_sync WHERE anchor IN (SELECT anchor FROM temp.retention_candidates)
                        AND NOT EXISTS (SELECT 1 FROM samples s WHERE s.anchor = sample_sync.anchor)
                    """)
            case .series(let end, let anchor):
                // A series carries about a minute of beats (a row each, deleted with it), so a
                // batch looks at a twentieth as many series as samples: about as many rows.
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
                // The beats go with their series (`heartbeats` cascades on its series' uuid).
                next.seriesPruned += try connection.run(
                    """
                    DELETE FROM heartbeat_series WHERE anchor IN (SELECT anchor FROM temp.retention_candidates)
                        AND anchor <= ?1 AND end_us < ?2
                        AND NOT EXISTS (SELECT 1 FROM workout_samples w WHERE w.sample_uuid = heartbeat_series.uuid)
                    """,
                    [.integer(slowest), .integer(keepAfter)])
            case .finished:
                break
            }
            return next
        }
    }
}
