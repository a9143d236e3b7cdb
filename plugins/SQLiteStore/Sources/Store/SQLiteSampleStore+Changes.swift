public import HealthModel
import SQLite

extension SQLiteSampleStore {
    /// The objects stored and deleted after `anchor`, in the order they changed, at most `limit`
    /// changes (added and deleted together), optionally of one `type`.
    ///
    /// Start from anchor 0 (everything stored, no tombstones), then pass the returned
    /// ``StoreChanges/anchor`` to the next call. An object stored again after its deletion, or a
    /// heartbeat series grown in place, appears once, at its latest anchor. Anchors survive
    /// closing and reopening the store (see StoreSchema+Version7.swift).
    /// - Throws: ``StoreError`` with `.invalidArgument` for a negative anchor or a limit below 1,
    ///   `.unknownAnchor` for an anchor above any the store handed out, `.anchorExpired` for an
    ///   anchor from before tombstones that have been purged (read again from 0),
    ///   `.schemaTooOld` for a file below schema version 7 (the gateway upgrades it).
    public func changes(
        since anchor: Int64, type: ChangeType? = nil, limit: Int? = nil
    ) async throws(StoreError) -> StoreChanges {
        let path = self.path
        guard anchor >= 0 else {
            throw StoreError(.invalidArgument, path: path, message: "the anchor must not be negative, got \(anchor)")
        }
        if let limit, limit < 1 {
            throw StoreError(.invalidArgument, path: path, message: "the limit must be at least 1, got \(limit)")
        }
        return try await read { connection throws(StoreError) in
            try Self.changes(connection, since: anchor, type: type, limit: limit, path: path)
        }
    }

    private static func changes(
        _ connection: SQLiteConnection, since anchor: Int64, type: ChangeType?, limit: Int?, path: String
    ) throws(StoreError) -> StoreChanges {
        let version: Int
        do {
            version = try connection.userVersion
        } catch {
            throw StoreError(error, path: path)
        }
        guard version >= 7 else {
            throw StoreError(
                .schemaTooOld, path: path,
                message: "schema version \(version) has no change log (version 7); start the gateway once to upgrade the file")
        }
        let bounds = try run(
            connection,
            "SELECT (SELECT ifnull(max(anchor), 0) FROM changes), (SELECT purged_through FROM change_retention)",
            [], path: path)
        let latest = bounds.first?.integer(0) ?? 0
        let purged = bounds.first?.integer(1) ?? 0
        guard anchor <= latest else {
            throw StoreError(
                .unknownAnchor, path: path,
                message: "anchor \(anchor) is above the store's latest (\(latest)): it comes from another store")
        }
        // Anchor 0 holds nothing yet, so it needs no tombstones.
        guard anchor == 0 || anchor >= purged else {
            throw StoreError(
                .anchorExpired, path: path,
                message: "anchor \(anchor) is older than the tombstones kept (through \(purged)); read again from anchor 0")
        }
        let typeBinding = type.map { SQLiteValue.text($0.identifier) } ?? .null
        // One row more than the limit tells whether more follow.
        let rows = try run(
            connection,
            """
            SELECT anchor, uuid, kind, type, deleted_us IS NOT NULL FROM changes
            WHERE anchor > ?1 AND (?2 IS NULL OR type = ?2) ORDER BY anchor LIMIT ?3
            """,
            [.integer(anchor), typeBinding, .integer(limit.map { Int64($0) + 1 } ?? -1)], path: path)
        let hasMore = limit.map { rows.count > $0 } ?? false
        let page = hasMore ? rows.prefix(limit ?? 0) : rows[...]
        let next = hasMore ? (page.last?.integer(0) ?? anchor) : latest

        var added: [(anchor: Int64, id: SampleID)] = []
        var deleted: [StoreChanges.Deletion] = []
        for row in page {
            let id = try RowDecoder.sampleID(row, 1, path: path)
            guard let rowAnchor = row.integer(0), let kindName = row.text(2),
                let kind = HealthRecordKind(rawValue: kindName), let typeName = row.text(3)
            else {
                throw StoreError(.invalidData, path: path, message: "change log row of \(id) is malformed")
            }
            if row.integer(4) == 1 {
                deleted.append(StoreChanges.Deletion(id: id, kind: kind, type: typeName, anchor: rowAnchor))
            } else {
                added.append((rowAnchor, id))
            }
        }
        var records: [SampleID: HealthRecord] = [:]
        if !added.isEmpty {
            // The stored objects of the page, read per table: anchors in (anchor, next].
            let inPage = "IN (SELECT uuid FROM changes WHERE anchor > ?1 AND anchor <= ?2 AND deleted_us IS NULL AND kind = "
            let bindings: [SQLiteValue] = [.integer(anchor), .integer(next)]
            for sample in try RowDecoder.samples(
                connection, where: "s.uuid \(inPage)'quantity')", orderBy: "s.uuid", bindings, path: path)
            {
                records[sample.id] = .quantity(sample)
            }
            for correlation in try RowDecoder.correlations(
                connection, where: "c.uuid \(inPage)'correlation')", bindings, path: path)
            {
                records[correlation.id] = .correlation(correlation)
            }
            for series in try RowDecoder.heartbeatSeries(
                connection, where: "h.uuid \(inPage)'heartbeatSeries')", bindings, path: path)
            {
                records[series.id] = .heartbeatSeries(series)
            }
            for workout in try RowDecoder.workouts(connection, where: "uuid \(inPage)'workout')", bindings, path: path) {
                records[workout.id] = .workout(workout)
            }
        }
        var result = StoreChanges(added: [], addedAnchors: [], deleted: deleted, anchor: next, hasMore: hasMore)
        for (rowAnchor, id) in added {
            guard let record = records[id] else {
                throw StoreError(.invalidData, path: path, message: "the change log names \(id), which is not stored")
            }
            result.added.append(record)
            result.addedAnchors.append(rowAnchor)
        }
        return result
    }
}
