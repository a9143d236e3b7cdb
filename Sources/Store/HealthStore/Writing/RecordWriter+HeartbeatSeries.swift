import HealthModel
import SQLite

// Heartbeat series: the series' row with its beats in one blob (HeartbeatEncoding). A series
// published again as it grows moves to a new anchor with its new beats.
extension RecordWriter {
    /// The series' row (or the stored series replaced, see ``vacateGrowingHeartbeatSeries(in:)``
    /// and ``extend(_:)``). `vacated` holds the series whose old rows this transaction deleted.
    func write(_ series: HeartbeatSeriesSample, vacated: inout Set<SampleID>) throws -> Outcome {
        if vacated.remove(series.id) != nil {
            try insertRow(series)
            return .replaced
        }
        if let outcome = try extend(series) { return outcome }
        let decision = try resolve(
            table: "heartbeat_series", kind: .heartbeatSeries, id: series.id, metadata: series.metadata)
        if decision == .ignore { return .ignored }
        try insertRow(series)
        if hasTombstones { try removeTombstone(of: series.id) }
        return decision == .replace ? .replaced : .inserted
    }

    /// Deletes the stored rows of the batch's series that come again at a higher version (the
    /// strap's series growing: every strap's every 10 s), before anything is inserted, and
    /// returns their uuids. A new version takes a new anchor, a new rowid: moved one by one,
    /// each row would leave a hole in a page the inserts at the table's end never reach again;
    /// all deleted first, the pages they leave are the ones the new rows fill.
    func vacateGrowingHeartbeatSeries(in records: [HealthRecord]) throws(SQLiteError) -> Set<SampleID> {
        var vacated: Set<SampleID> = []
        for record in records {
            guard case .heartbeatSeries(let series) = record, let version = series.metadata.syncVersion,
                !vacated.contains(series.id)
            else { continue }
            let id = SQLiteValue.blob(series.id.bytes)
            guard let stored = try connection.query(
                "SELECT ifnull(sync_version, 0), beats IS NULL FROM heartbeat_series WHERE uuid = ?1", [id]).first,
                version > stored.integer(0) ?? 0
            else { continue }
            try connection.run("DELETE FROM heartbeat_series WHERE uuid = ?1", [id])
            // A series stored before version 15 kept its beats in rows of their own.
            if stored.integer(1) == 1, try hasLegacyBeats() {
                try connection.run("DELETE FROM heartbeats WHERE series_uuid = ?1", [id])
            }
            vacated.insert(series.id)
        }
        return vacated
    }

    /// Inserts the series' row at a new anchor.
    private func insertRow(_ series: HeartbeatSeriesSample) throws {
        let id = SQLiteValue.blob(series.id.bytes)
        try connection.run(
            """
            INSERT INTO heartbeat_series (anchor, uuid, start_us, end_us, beat_count, device_id, sync_identifier,
                sync_version, metadata_set_id, beats)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
            """,
            [.integer(nextAnchor()), id, .integer(StoreTime.microseconds(series.startDate)),
             .integer(StoreTime.microseconds(series.endDate)), .integer(Int64(series.beats.count)),
             try deviceID(for: series.device).map(SQLiteValue.integer) ?? .null]
                + (try syncColumns(of: series.metadata)) + [.blob(HeartbeatEncoding.encode(series.beats))])
    }

    /// A series whose uuid is stored already, with a higher sync version, that
    /// ``vacateGrowingHeartbeatSeries(in:)`` did not delete (a second version in one batch). Its
    /// row moves to a new anchor and is updated with the new version's beats (a minute's beats
    /// are a blob of about a hundred bytes: rewriting it costs what appending would).
    /// - Returns: nil when the uuid is not stored (the ordinary rules apply).
    private func extend(_ series: HeartbeatSeriesSample) throws -> Outcome? {
        let id = SQLiteValue.blob(series.id.bytes)
        guard let stored = try connection.query(
            "SELECT ifnull(sync_version, 0), beats IS NULL FROM heartbeat_series WHERE uuid = ?1", [id]).first
        else { return nil }
        guard let version = series.metadata.syncVersion, version > stored.integer(0) ?? 0 else { return .ignored }
        try connection.run(
            """
            UPDATE heartbeat_series SET anchor = ?2, start_us = ?3, end_us = ?4, beat_count = ?5, device_id = ?6,
                sync_identifier = ?7, sync_version = ?8, metadata_set_id = ?9, beats = ?10
            WHERE uuid = ?1
            """,
            [id, .integer(nextAnchor()), .integer(StoreTime.microseconds(series.startDate)),
             .integer(StoreTime.microseconds(series.endDate)),
             .integer(Int64(series.beats.count)), try deviceID(for: series.device).map(SQLiteValue.integer) ?? .null,
             series.metadata.syncIdentifier.map(SQLiteValue.text) ?? .null, .integer(version),
             try metadataSetID(for: series.metadata).map(SQLiteValue.integer) ?? .null,
             .blob(HeartbeatEncoding.encode(series.beats))])
        // A series stored before version 15 kept its beats in rows of their own.
        if stored.integer(1) == 1, try hasLegacyBeats() {
            try connection.run("DELETE FROM heartbeats WHERE series_uuid = ?1", [id])
        }
        return .replaced
    }

    /// Whether the `heartbeats` table of earlier versions is still there (StoreMigration drops
    /// it once every series' beats are in its blob).
    func hasLegacyBeats() throws(SQLiteError) -> Bool {
        try connection.query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'heartbeats'").isEmpty == false
    }
}
