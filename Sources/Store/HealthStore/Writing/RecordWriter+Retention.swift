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
            guard let walk = RetentionTable.walk(at: progress.position) else { return next }
            let table = walk.table
            var typeID = walk.typeID, after = walk.after
            if table.walksByType {
                // The type to look at: this one, or the next stored; within the type where the
                // last batch stopped, after its last candidate.
                guard let current = try connection.query(table.nextTypeSQL, [.integer(typeID)]).first?.integer(0) else {
                    next.position = table.following
                    return next
                }
                if current != typeID { after = nil }
                typeID = current
            }
            let candidateLimit = table.candidateLimit(limit)
            // Parameters the text leaves out (the type of a table walked whole, the key at a
            // type's beginning) are bound to null and unused.
            let rows = try connection.query(
                table.candidatesSQL(resuming: after != nil),
                [.integer(typeID), .integer(cutoffMicroseconds)] + (after ?? [.null, .null]) + [.integer(candidateLimit)])
            next.position = table.position(after: rows, limit: candidateLimit, typeID: typeID)
            let insert = try connection.statement("INSERT INTO temp.retention_candidates (anchor) VALUES (?1)")
            for row in rows {
                guard let anchor = row.integer(2) else { continue }
                insert.bind(anchor, at: 1)
                try insert.runAndReset()
            }
            next[keyPath: table.pruned] += try connection.run(
                table.deleteSQL(outsideWorkouts: keepWorkoutRecords),
                [.integer(slowest), .integer(keepAfter), .integer(cutoffMicroseconds)]
                    + (keepWorkoutRecords ? [.integer(longest)] : []))
            if let orphans = table.orphansSQL { try connection.run(orphans) }
            return next
        }
    }
}
