import HealthModel
import SQLite

// The background part of version 15's upgrade (StoreSchema+Version15.swift): the beats of
// series stored before it move from `heartbeats` into their series' blob, and the links of
// `workout_samples` go, a bounded batch per transaction, so that ingest never waits for more than
// one; `store_migrations` keeps where each step stands, so a killed gateway resumes there.
extension RecordWriter {
    /// One batch of the first unfinished step: up to `seriesLimit` heartbeat series' beats moved,
    /// or up to `linkLimit` links deleted; a step with nothing left drops its table and is marked
    /// finished. Returns the steps' progress after the batch; every step finished when none is
    /// left to run.
    func migrateBatch(seriesLimit: Int, linkLimit: Int, attributionWindow: Int64) throws(StoreError) -> [StoreMigrationStep] {
        try transaction { () throws -> [StoreMigrationStep] in
            let steps = try migrationSteps()
            guard let step = steps.first(where: { $0.finished == nil }) else { return steps }
            switch step.name {
            case "heartbeats": try moveBeats(after: step.position, limit: seriesLimit)
            case "workout_samples": try deleteLinks(limit: linkLimit)
            case "attribution": try attributeStoredReadings(step, window: attributionWindow)
            default:
                try connection.run(
                    "UPDATE store_migrations SET finished_us = ?2 WHERE step = ?1",
                    [.text(step.name), .integer(StoreTime.microseconds(now()))])
            }
            return try migrationSteps()
        }
    }

    /// Every step of the background migration, in the order they run.
    func migrationSteps() throws(SQLiteError) -> [StoreMigrationStep] {
        try StoreMigrationStep.all(in: connection)
    }

    /// Moves the beats of up to `limit` series after anchor `position` into their blobs. The
    /// series still without a blob are those stored before the upgrade (every later write gives
    /// a series its blob), so `done` counts toward the `total` counted then.
    private func moveBeats(after position: Int64, limit: Int) throws {
        guard try hasLegacyBeats() else {
            try finish("heartbeats")
            return
        }
        // By anchor, the table's key: a series that moves to a new anchor meanwhile (grown, or
        // moved by a clock correction) was given its blob by the write that moved it.
        let rows = try connection.query(
            "SELECT anchor, uuid FROM heartbeat_series WHERE anchor > ?1 AND beats IS NULL ORDER BY anchor LIMIT ?2",
            [.integer(position), .integer(Int64(limit))])
        guard let last = rows.last?.integer(0) else {
            try connection.execute("DROP TABLE heartbeats")
            try finish("heartbeats")
            return
        }
        var moved = 0
        let select = try connection.statement(
            "SELECT time_since_start, preceded_by_gap FROM heartbeats WHERE series_uuid = ?1 ORDER BY beat_index")
        for row in rows {
            let uuid = row.values[1]
            try select.bind([uuid])
            var beats: [Heartbeat] = []
            while try select.step() {
                beats.append(Heartbeat(timeSinceSeriesStart: select.double(0) ?? 0, precededByGap: (select.integer(1) ?? 0) != 0))
            }
            select.reset()
            // The series keeps its anchor: its content is as it was, and no follower sends it again.
            try connection.run("UPDATE heartbeat_series SET beats = ?2 WHERE uuid = ?1", [uuid, .blob(HeartbeatEncoding.encode(beats))])
            try connection.run("DELETE FROM heartbeats WHERE series_uuid = ?1", [uuid])
            moved += 1
        }
        try connection.run(
            "UPDATE store_migrations SET done = done + ?2, position = ?3 WHERE step = ?1",
            // Counted: the series moved, not those written with their blob since the upgrade began.
            [.text("heartbeats"), .integer(Int64(moved)), .integer(last)])
    }

    /// Deletes up to `limit` links of `workout_samples`; drops the table once it is empty.
    private func deleteLinks(limit: Int) throws {
        let exists = try connection.query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'workout_samples'").isEmpty == false
        guard exists else {
            try finish("workout_samples")
            return
        }
        let deleted = try connection.run(
            """
            DELETE FROM workout_samples WHERE (workout_uuid, sample_uuid) IN (
                SELECT workout_uuid, sample_uuid FROM workout_samples LIMIT ?1)
            """, [.integer(Int64(limit))])
        if deleted == 0 {
            try connection.execute("DROP TABLE workout_samples")
            try finish("workout_samples")
            return
        }
        try connection.run("UPDATE store_migrations SET done = done + ?2 WHERE step = ?1", [.text("workout_samples"), .integer(Int64(deleted))])
    }

    private func finish(_ step: String) throws(SQLiteError) { try finishMigrationStep(step) }

    /// Marks `step` finished, every row of it handled.
    func finishMigrationStep(_ step: String) throws(SQLiteError) {
        try connection.run(
            "UPDATE store_migrations SET finished_us = ?2, done = total WHERE step = ?1",
            [.text(step), .integer(StoreTime.microseconds(now()))])
    }
}
