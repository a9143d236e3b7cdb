import FoundationEssentials
import HealthModel
import SQLite

extension RecordWriter {
    /// The follower `name`, registered at `start` when it is new: anchor 0 (`.beginning`, every
    /// change the store holds) or the latest anchor (`.now`).
    func registerFollower(_ name: String, startingAt start: FollowerStart) throws(StoreError) -> FollowerCursor {
        try transaction { () throws -> FollowerCursor in
            let initial: Int64 = start == .beginning ? 0 : try latestAnchorInTransaction
            try connection.run(
                "INSERT OR IGNORE INTO followers (name, anchor, skipped, updated_us) VALUES (?1, ?2, 0, ?3)",
                [.text(name), .integer(initial), .integer(StoreTime.microseconds(now()))])
            hasFollowers = true
            guard let cursor = try Self.follower(name, connection) else {
                throw StoreError(.invalidData, path: path, message: "the follower \(name) was not stored")
            }
            return cursor
        }
    }

    /// Forgets every follower not in `names` (a remote sink removed from the configuration), so
    /// that it no longer holds tombstones or, in a journal, records.
    /// - Returns: the names forgotten.
    func removeFollowers(keeping names: [String]) throws(StoreError) -> [String] {
        try transaction { () throws -> [String] in
            let stored = try connection.query("SELECT name FROM followers ORDER BY name").compactMap { $0.text(0) }
            let removed = stored.filter { !names.contains($0) }
            for name in removed {
                try connection.run("DELETE FROM followers WHERE name = ?1", [.text(name)])
                try connection.run("DELETE FROM follower_batches WHERE follower = ?1", [.text(name)])
                try connection.run("DELETE FROM dead_letters WHERE follower = ?1", [.text(name)])
            }
            try releaseLog()
            return removed
        }
    }

    /// Moves follower `name`'s cursor forward to `anchor` (never back), then releases what every
    /// follower has acknowledged (``releaseLog()``).
    func acknowledge(follower name: String, through anchor: Int64) throws(StoreError) {
        try transaction {
            let changed = try connection.run(
                "UPDATE followers SET anchor = ?2, updated_us = ?3 WHERE name = ?1 AND anchor < ?2",
                [.text(name), .integer(anchor), .integer(StoreTime.microseconds(now()))])
            try connection.run(
                "DELETE FROM follower_batches WHERE follower = ?1 AND through <= ?2", [.text(name), .integer(anchor)])
            if changed > 0 { try releaseLog() }
        }
    }

    /// Sets follower `name`'s cursor to `anchor`, forgetting its batches: past changes it will
    /// never get (its retention bounds), or back to where a replaced store's log starts, adding
    /// `count` to its skipped changes.
    func skip(follower name: String, to anchor: Int64, count: Int64) throws(StoreError) {
        try transaction {
            let previous = try Self.follower(name, connection)?.anchor ?? 0
            try connection.run(
                "UPDATE followers SET anchor = ?2, skipped = skipped + ?3, updated_us = ?4 WHERE name = ?1",
                [.text(name), .integer(anchor), .integer(count), .integer(StoreTime.microseconds(now()))])
            // Forward, the batches beyond the new cursor stay what they were (sent, or being
            // sent); back (a replaced store), none of them means anything any more.
            if anchor < previous {
                try connection.run("DELETE FROM follower_batches WHERE follower = ?1", [.text(name)])
            } else {
                try connection.run(
                    "DELETE FROM follower_batches WHERE follower = ?1 AND through <= ?2", [.text(name), .integer(anchor)])
            }
            try releaseLog()
        }
    }

    /// Records that follower `name` is about to send the changes in (`after`, `through`] under
    /// `key`.
    func beginBatch(follower name: String, after: Int64, through: Int64, key: String) throws(StoreError) {
        try transaction {
            _ = try connection.run(
                "INSERT OR REPLACE INTO follower_batches (follower, after, through, batch_key) VALUES (?1, ?2, ?3, ?4)",
                [.text(name), .integer(after), .integer(through), .text(key)])
        }
    }

    /// Records that follower `name`'s receiver acknowledged its batches starting after `anchors`.
    func rememberBatches(follower name: String, after anchors: [Int64]) throws(StoreError) {
        try transaction {
            for anchor in anchors {
                _ = try connection.run(
                    "UPDATE follower_batches SET acknowledged = 1 WHERE follower = ?1 AND after = ?2", [.text(name), .integer(anchor)])
            }
        }
    }

    /// Sets (or clears, with nil) the time before which follower `name` sends nothing.
    func pause(follower name: String, until date: Date?) throws(StoreError) {
        try transaction {
            _ = try connection.run(
                "UPDATE followers SET paused_until_us = ?2 WHERE name = ?1",
                [.text(name), date.map { .integer(StoreTime.microseconds($0)) } ?? .null])
        }
    }

    /// Deletes what every follower has passed: the `log_commits` rows, and, when the store keeps
    /// records only until they are acknowledged (``LogRetention/untilAcknowledged``), the
    /// records and tombstones themselves.
    private func releaseLog() throws {
        let slowest = try connection.query("SELECT min(anchor) FROM followers").first?.integer(0)
        guard let slowest else {
            hasFollowers = false
            try connection.execute("DELETE FROM log_commits")
            return
        }
        try connection.run("DELETE FROM log_commits WHERE last_anchor <= ?1", [.integer(slowest)])
        if retention == .untilAcknowledged { try prune(through: slowest) }
    }

    /// Deletes, without tombstones, the objects at or below `anchor` that no running workout
    /// collects (a workout reads its samples back when it ends), and the tombstones at or below
    /// it. A correlation goes with its member samples, and a member sample only with its
    /// correlation.
    private func prune(through anchor: Int64) throws {
        // Objects ending after the oldest running workout began stay until it ends.
        let keepAfter = try connection.query(
            "SELECT min(at_us) FROM live_workout_events WHERE action = 'start'").first?.integer(0) ?? Int64.max
        let bounds: [SQLiteValue] = [.integer(anchor), .integer(keepAfter)]
        try connection.run(
            """
            DELETE FROM samples WHERE anchor IN (
                SELECT m.sample_anchor FROM correlations c JOIN correlation_members m ON m.correlation_uuid = c.uuid
                WHERE c.anchor <= ?1 AND c.end_us < ?2)
            """, bounds)
        try connection.run("DELETE FROM correlations WHERE anchor <= ?1 AND end_us < ?2", bounds)
        try connection.run(
            """
            DELETE FROM samples WHERE anchor <= ?1 AND start_us + duration_us < ?2
                AND anchor NOT IN (SELECT sample_anchor FROM correlation_members)
            """, bounds)
        try connection.run(
            "DELETE FROM sample_sync WHERE anchor <= ?1 AND anchor NOT IN (SELECT anchor FROM samples)", [.integer(anchor)])
        // An open series is still growing: it goes once closed and acknowledged in that version.
        try connection.run("DELETE FROM quantity_series WHERE anchor <= ?1 AND end_us < ?2 AND open = 0", bounds)
        try connection.run("DELETE FROM heartbeat_series WHERE anchor <= ?1 AND end_us < ?2", bounds)
        try connection.run("DELETE FROM workout_statistics WHERE workout_uuid IN (SELECT uuid FROM workouts WHERE anchor <= ?1 AND end_us < ?2)", bounds)
        try connection.run("DELETE FROM workouts WHERE anchor <= ?1 AND end_us < ?2", bounds)
        try connection.run(
            "UPDATE anchors SET purged_through = max(purged_through, ifnull((SELECT max(anchor) FROM tombstones WHERE anchor <= ?1), 0))",
            [.integer(anchor)])
        try connection.run("DELETE FROM tombstones WHERE anchor <= ?1", [.integer(anchor)])
    }

    /// Stores dead letters (a receiver refused them one by one); a later letter for the same
    /// follower and uuid replaces the earlier one.
    func addDeadLetters(_ letters: [DeadLetter]) throws(StoreError) {
        try transaction {
            for letter in letters {
                try connection.run(
                    """
                    INSERT OR REPLACE INTO dead_letters (follower, uuid, kind, type, deleted, anchor, payload, status,
                        response, failed_us, retry)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0)
                    """,
                    [
                        .text(letter.follower), .blob(letter.id.bytes), .text(letter.kind.rawValue), .text(letter.type),
                        .integer(letter.isDeletion ? 1 : 0), .integer(letter.anchor),
                        letter.payload.map { .blob($0) } ?? .null, .integer(Int64(letter.status)), .text(letter.response),
                        .integer(StoreTime.microseconds(letter.failedAt)),
                    ])
            }
        }
    }

    /// Marks dead letters to be sent again by their follower: those of `ids` (every one when
    /// nil), of `follower` (every follower when nil).
    /// - Returns: how many were marked.
    func markDeadLettersForRetry(follower: String?, ids: [SampleID]?) throws(StoreError) -> Int {
        try transaction { () throws -> Int in
            let ofFollower = "(?1 IS NULL OR follower = ?1)"
            guard let ids else {
                return try connection.run("UPDATE dead_letters SET retry = 1 WHERE \(ofFollower)", [follower.map { .text($0) } ?? .null])
            }
            var marked = 0
            for id in ids {
                marked += try connection.run(
                    "UPDATE dead_letters SET retry = 1 WHERE \(ofFollower) AND uuid = ?2",
                    [follower.map { .text($0) } ?? .null, .blob(id.bytes)])
            }
            return marked
        }
    }

    /// Removes dead letters by row id (delivered on retry, or dropped by the operator).
    func removeDeadLetters(_ rowIDs: [Int64]) throws(StoreError) -> Int {
        try transaction { () throws -> Int in
            var removed = 0
            for rowID in rowIDs {
                removed += try connection.run("DELETE FROM dead_letters WHERE id = ?1", [.integer(rowID)])
            }
            return removed
        }
    }

    /// The greatest anchor handed out, read inside a transaction.
    private var latestAnchorInTransaction: Int64 {
        get throws { try connection.query("SELECT latest FROM anchors").first?.integer(0) ?? 0 }
    }

    /// The follower `name`, or nil.
    static func follower(_ name: String, _ connection: SQLiteConnection) throws -> FollowerCursor? {
        guard let row = try connection.query(
            "SELECT anchor, skipped, updated_us, paused_until_us FROM followers WHERE name = ?1", [.text(name)]
        ).first, let anchor = row.integer(0) else { return nil }
        return FollowerCursor(
            name: name, anchor: anchor, skipped: row.integer(1) ?? 0,
            updatedAt: StoreTime.date(microseconds: row.integer(2) ?? 0),
            pausedUntil: row.integer(3).map { StoreTime.date(microseconds: $0) })
    }
}
