import FoundationEssentials
import HealthModel
import SQLite

extension RecordWriter {
    /// Moves every record and workout journal entry taken on an earlier clock base of
    /// `base`'s boot onto `base`, and the log's dates written on `previous`, in ONE immediate
    /// transaction; see ``HealthStore/correctClock(onto:from:now:)``.
    func correctClock(onto base: ClockBase, from previous: ClockBase?, now: Date) throws(StoreError) -> ClockCorrection {
        let correction = try transaction { () throws -> ClockCorrection in
            var correction = ClockCorrection()
            if let previous, let seconds = base.seconds(from: previous), seconds != 0 {
                correction.logEntries = try moveLogDates(by: seconds, writtenOn: previous, uptime: now.timeIntervalSince(
                    Date(timeIntervalSince1970: Double(base.wallMinusBootMilliseconds) / 1000)))
            }
            try connection.execute("""
                CREATE TEMP TABLE IF NOT EXISTS rebased_sets (id INTEGER PRIMARY KEY);
                DELETE FROM temp.rebased_sets;
                """)
            try connection.run(
                """
                INSERT INTO temp.rebased_sets (id)
                SELECT b.set_id FROM metadata_set_entries b
                JOIN metadata_set_entries w ON w.set_id = b.set_id AND w.key = ?3 AND w.value_type = 'integer'
                WHERE b.key = ?1 AND b.value_type = 'string' AND b.value = ?2 AND w.value <> ?4
                """,
                [.text(MetadataKey.bootID.rawValue), .text(base.bootID), .text(MetadataKey.clockBase.rawValue),
                 .integer(base.wallMinusBootMilliseconds)])
            let inSets = "IN (SELECT id FROM temp.rebased_sets)"
            if try connection.query("SELECT 1 FROM temp.rebased_sets LIMIT 1").isEmpty == false {
                // Read first, then replace: each record leaves its row and is written again with
                // its moved dates, at a new anchor (its tombstone goes as it is stored again), so
                // every follower sends it again.
                var moved: [(old: HealthRecord, anchor: Int64)] = []
                try RowDecoder.forEachSample(
                    connection,
                    where: "s.metadata_set_id \(inSets) AND s.anchor NOT IN (SELECT sample_anchor FROM correlation_members)",
                    orderBy: "s.anchor", [], path: path
                ) { anchor, sample in moved.append((.quantity(sample), anchor)) }
                try RowDecoder.forEachSeries(
                    connection, where: "q.metadata_set_id \(inSets)", orderBy: "q.anchor", [], path: path
                ) { anchor, series in moved.append((.quantitySeries(series), anchor)) }
                for (anchor, series) in try RowDecoder.heartbeatSeries(
                    connection, where: "h.metadata_set_id \(inSets)", [], path: path)
                {
                    moved.append((.heartbeatSeries(series), anchor))
                }
                for (anchor, correlation) in try RowDecoder.correlations(
                    connection, where: "c.metadata_set_id \(inSets)", [], path: path)
                {
                    moved.append((.correlation(correlation), anchor))
                }
                for (anchor, workout) in try RowDecoder.workouts(connection, where: "metadata_set_id \(inSets)", [], path: path) {
                    moved.append((.workout(workout), anchor))
                }
                var replacements: [HealthRecord] = []
                for (old, anchor) in moved {
                    guard var new = old.rebased(onto: base) else { continue }
                    // A quantity series' versions share its sync identifier: the moved one must
                    // be a later version, or a receiver keeping the highest would keep the old.
                    if case .quantitySeries(var series) = new {
                        series.metadata.syncVersion = (series.metadata.syncVersion ?? 1) + 1
                        new = .quantitySeries(series)
                    }
                    try remove(old, at: anchor)
                    replacements.append(new)
                }
                _ = try writeRecords(replacements)
                correction.records = replacements.count
            }
            correction.journalEntries = try connection.run(
                """
                UPDATE live_workout_events SET
                    at_us = at_us + (?2 - json_extract(metadata, '$."\(MetadataKey.clockBase)"')) * 1000,
                    segment_start_us = segment_start_us + (?2 - json_extract(metadata, '$."\(MetadataKey.clockBase)"')) * 1000,
                    metadata = json_set(metadata, '$."\(MetadataKey.clockBase)"', ?2)
                WHERE json_valid(metadata) AND json_extract(metadata, '$."\(MetadataKey.bootID)"') = ?1
                    AND json_extract(metadata, '$."\(MetadataKey.clockBase)"') <> ?2
                """, [.text(base.bootID), .integer(base.wallMinusBootMilliseconds)])
            return correction
        }
        correctedBase = base
        return correction
    }

    /// The writer dates the log's commits (a follower's backlog age, its `maxAgeSeconds`
    /// retention) and its tombstones (their purge) with the wall clock: those written on
    /// `previous`, since this boot (dated from the boot, `previous`' wall time then, to `uptime`
    /// later), move with the step, so a step forward does not make a backlog look years old
    /// (and skipped) nor tombstones due for purging. A step back cannot tell the few written in
    /// the seconds between the step and this correction from those before it, and moves them too.
    /// - Returns: how many rows moved.
    private func moveLogDates(by seconds: Double, writtenOn previous: ClockBase, uptime: Double) throws -> Int {
        let low = previous.wallMinusBootMilliseconds * 1000
        let high = low + Int64((max(0, uptime) + 1) * 1_000_000)
        let bindings: [SQLiteValue] = [.integer(Int64((seconds * 1_000_000).rounded())), .integer(low), .integer(high)]
        return try connection.run(
            "UPDATE log_commits SET committed_us = committed_us + ?1 WHERE committed_us BETWEEN ?2 AND ?3", bindings)
            + connection.run("UPDATE tombstones SET deleted_us = deleted_us + ?1 WHERE deleted_us BETWEEN ?2 AND ?3", bindings)
    }

    /// Deletes a record about to be written again (a correlation with its members).
    func remove(_ record: HealthRecord, at anchor: Int64) throws {
        let uuid = SQLiteValue.blob(record.id.bytes)
        switch record {
        case .quantity(let sample):
            try deleteObject(table: "samples", anchor: anchor, uuid: uuid, kind: .quantity, type: sample.type.identifier)
        case .quantitySeries(let series):
            try deleteObject(table: "quantity_series", anchor: anchor, uuid: uuid, kind: .quantitySeries, type: series.type.identifier)
        case .heartbeatSeries:
            try deleteObject(table: "heartbeat_series", anchor: anchor, uuid: uuid, kind: .heartbeatSeries, type: "heartbeatSeries")
        case .correlation(let correlation):
            for member in try connection.query(
                "SELECT s.anchor, s.uuid, t.identifier FROM correlation_members m JOIN samples s ON s.anchor = m.sample_anchor "
                    + "JOIN quantity_types t ON t.id = s.type_id WHERE m.correlation_uuid = ?1", [uuid])
            {
                guard let memberAnchor = member.integer(0) else { continue }
                try deleteObject(
                    table: "samples", anchor: memberAnchor, uuid: member.values[1], kind: .quantity, type: member.text(2) ?? "")
            }
            try deleteObject(
                table: "correlations", anchor: anchor, uuid: uuid, kind: .correlation, type: correlation.type.identifier)
        case .workout:
            try deleteObject(table: "workouts", anchor: anchor, uuid: uuid, kind: .workout, type: "workout")
        }
    }
}
