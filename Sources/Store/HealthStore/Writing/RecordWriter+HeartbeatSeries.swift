import HealthModel
import SQLite

// Heartbeat series: the series' row, its beats and its links to the workouts it overlaps. A
// series published again as it grows is extended in place.
extension RecordWriter {
    /// The series' row and beats (or the stored series extended, see ``extend(_:)``), linked
    /// to the workouts it overlaps.
    func write(_ series: HeartbeatSeriesSample) throws -> Outcome {
        if let outcome = try extend(series) { return outcome }
        let syncIdentifier = series.metadata.syncIdentifier
        let decision = try resolve(
            table: "heartbeat_series", kind: .heartbeatSeries, id: series.id, syncIdentifier: syncIdentifier,
            version: series.metadata.syncVersion ?? 0)
        if decision == .ignore { return .ignored }
        let id = SQLiteValue.blob(series.id.bytes)
        try connection.run(
            """
            INSERT INTO heartbeat_series (anchor, uuid, start_us, end_us, beat_count, device_id, sync_identifier,
                sync_version, metadata_set_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            """,
            [.integer(nextAnchor()), id, .integer(StoreTime.microseconds(series.startDate)),
             .integer(StoreTime.microseconds(series.endDate)), .integer(Int64(series.beats.count)),
             try deviceID(for: series.device).map(SQLiteValue.integer) ?? .null,
             syncIdentifier.map(SQLiteValue.text) ?? .null,
             series.metadata.syncVersion.map(SQLiteValue.integer) ?? .null,
             try metadataSetID(for: series.metadata).map(SQLiteValue.integer) ?? .null])
        if hasTombstones { try removeTombstone(of: series.id) }
        try insertBeats(of: series, from: 0)
        try WorkoutLinks.linkSeries(
            id, start: series.startDate, end: series.endDate, device: series.device, connection: connection)
        return decision == .replace ? .replaced : .inserted
    }

    /// A series whose uuid is stored already, with a higher sync version: a series published
    /// again as it grows (metadata `healthgate.provisional`). Its row moves to a new anchor and
    /// is updated in place, and only the beats past those stored are written: a later version
    /// with the same start extends the earlier one (beats are only ever appended), so each
    /// version costs what it adds. A version with another start has every beat rewritten.
    /// - Returns: nil when the uuid is not stored (the ordinary rules apply).
    private func extend(_ series: HeartbeatSeriesSample) throws -> Outcome? {
        let id = SQLiteValue.blob(series.id.bytes)
        guard let stored = try connection.query(
            "SELECT ifnull(sync_version, 0), start_us, beat_count FROM heartbeat_series WHERE uuid = ?1", [id]).first
        else { return nil }
        guard let version = series.metadata.syncVersion, version > stored.integer(0) ?? 0 else { return .ignored }
        let start = StoreTime.microseconds(series.startDate)
        let kept = stored.integer(1) == start ? min(Int(stored.integer(2) ?? 0), series.beats.count) : 0
        try connection.run(
            """
            UPDATE heartbeat_series SET anchor = ?2, start_us = ?3, end_us = ?4, beat_count = ?5, device_id = ?6,
                sync_identifier = ?7, sync_version = ?8, metadata_set_id = ?9
            WHERE uuid = ?1
            """,
            [id, .integer(nextAnchor()), .integer(start), .integer(StoreTime.microseconds(series.endDate)),
             .integer(Int64(series.beats.count)), try deviceID(for: series.device).map(SQLiteValue.integer) ?? .null,
             series.metadata.syncIdentifier.map(SQLiteValue.text) ?? .null, .integer(version),
             try metadataSetID(for: series.metadata).map(SQLiteValue.integer) ?? .null])
        try connection.run(
            "DELETE FROM heartbeats WHERE series_uuid = ?1 AND beat_index >= ?2", [id, .integer(Int64(kept))])
        try insertBeats(of: series, from: kept)
        // Grown, it may now overlap a workout the earlier version did not reach.
        try WorkoutLinks.linkSeries(
            id, start: series.startDate, end: series.endDate, device: series.device, connection: connection)
        return .replaced
    }

    private func insertBeats(of series: HeartbeatSeriesSample, from first: Int) throws(SQLiteError) {
        guard first < series.beats.count else { return }
        let beat = try connection.statement(
            "INSERT INTO heartbeats (series_uuid, beat_index, time_since_start, preceded_by_gap) VALUES (?1, ?2, ?3, ?4)")
        var key = (series.id.high.bigEndian, series.id.low.bigEndian)
        for index in first..<series.beats.count {
            let heartbeat = series.beats[index]
            withUnsafeBytes(of: &key) { beat.bind(bytes: $0, at: 1) }
            beat.bind(Int64(index), at: 2)
            beat.bind(heartbeat.timeSinceSeriesStart, at: 3)
            beat.bind(Int64(heartbeat.precededByGap ? 1 : 0), at: 4)
            try beat.runAndReset()
        }
    }
}
