import HealthModel
import SQLite

extension HealthStore {
    /// The objects stored and deleted after `anchor`, in the order they changed, at most `limit`
    /// changes (added and deleted together), optionally of one `type`.
    ///
    /// Start from anchor 0 (everything stored, no tombstones), then pass the returned
    /// ``StoreChanges/anchor`` to the next call. An object's anchor is its row's key: an object
    /// stored again after its deletion, a heartbeat series grown in place, or a record replaced
    /// through its sync identifier appears once, at its latest anchor (the replaced record as a
    /// deletion). Anchors survive closing and reopening the store and its migrations.
    ///
    /// The samples of a correlation (a blood pressure's systolic and diastolic) are samples of
    /// the store too, and listed as such, unless `includingCorrelationMembers` is false: then
    /// they travel only inside their correlation, as a remote sink sends them.
    /// - Throws: ``StoreError`` with `.invalidArgument` for a negative anchor or a limit below 1,
    ///   `.unknownAnchor` for an anchor above any the store handed out, `.anchorExpired` for an
    ///   anchor from before tombstones that have been purged (read again from 0).
    public func changes(
        since anchor: Int64, type: ChangeType? = nil, limit: Int? = nil, includingCorrelationMembers: Bool = true
    ) async throws(StoreError) -> StoreChanges {
        let path = self.path
        guard anchor >= 0 else {
            throw StoreError(.invalidArgument, path: path, message: "the anchor must not be negative, got \(anchor)")
        }
        if let limit, limit < 1 {
            throw StoreError(.invalidArgument, path: path, message: "the limit must be at least 1, got \(limit)")
        }
        return try await read { connection throws(StoreError) in
            try Self.changes(
                connection, since: anchor, type: type, limit: limit, members: includingCorrelationMembers, path: path)
        }
    }

    /// The latest anchor the store has handed out (0 for an empty store).
    public func latestAnchor() async throws(StoreError) -> Int64 {
        let path = self.path
        return try await shortRead(oneStatement: true) { connection throws(StoreError) in
            try Self.latestAnchor(connection, path: path)
        }
    }

    private static func changes(
        _ connection: SQLiteConnection, since anchor: Int64, type: ChangeType?, limit: Int?, members: Bool, path: String
    ) throws(StoreError) -> StoreChanges {
        let latest = try checkedLatestAnchor(connection, since: anchor, path: path)
        // Each table is read in anchor order, at most one row more than the limit from each,
        // and the tables are merged by anchor as they are read: samples and series (most of a
        // store) through cursors whose rows are decoded only when they go into the page; the
        // correlations, heartbeat series and workouts, whose readers run a query per record,
        // and the tombstones, read whole first.
        let rowLimit = Int64(limit.map { $0 + 1 } ?? -1)
        let range: [SQLiteValue] = [.integer(anchor), .integer(rowLimit)]
        let others = try recordsReadWhole(connection, type: type, range: range, path: path)
        let deleted = try tombstones(connection, since: anchor, type: type, rowLimit: rowLimit, path: path)
        // A quantity series is an object of its quantity type's: asked for with the type.
        let wantsQuantities = type == nil || type?.kind == .quantity
        let notMember = members ? "" : " AND s.anchor NOT IN (SELECT sample_anchor FROM correlation_members)"
        var samples = wantsQuantities
            ? try anchorCursor(connection, RowDecoder.sampleSelect, alias: "s", also: notMember, type: type, range: range, path: path) : nil
        var series = wantsQuantities
            ? try anchorCursor(connection, RowDecoder.seriesSelect, alias: "q", also: "", type: type, range: range, path: path) : nil
        defer {
            samples?.close()
            series?.close()
        }

        // The merge: the smallest next anchor of the four sources goes into the page (anchors are
        // unique across the tables) until the page holds `limit` changes.
        enum Source { case deletion, sample, series, other }
        var (nextOther, nextDeletion) = (0, 0)
        func next() -> Source? {
            var best: (source: Source, anchor: Int64)?
            func consider(_ source: Source, _ candidate: Int64?) {
                if let candidate, best.map({ candidate < $0.anchor }) ?? true { best = (source, candidate) }
            }
            consider(.deletion, nextDeletion < deleted.count ? deleted[nextDeletion].anchor : nil)
            consider(.sample, samples?.anchor)
            consider(.series, series?.anchor)
            consider(.other, nextOther < others.count ? others[nextOther].anchor : nil)
            return best?.source
        }
        var vocabulary = StoreVocabulary(connection: connection, path: path)
        var metadataReader = MetadataReader(path: path)
        var added: [HealthRecord] = []
        var addedAnchors: [Int64] = []
        // The page's size is known up to its bound: at most `limit`, and at most one change per
        // anchor handed out after `anchor`. Reserved once, the two arrays are not grown by
        // doubling (seventeen reallocations for 100 000 changes, the last ones each a fresh
        // mapping the kernel faults in).
        if let limit {
            let bound = min(limit, Int(clamping: latest - anchor))
            added.reserveCapacity(bound)
            addedAnchors.reserveCapacity(bound)
        }
        var deletions: [StoreChanges.Deletion] = []
        while limit.map({ added.count + deletions.count < $0 }) ?? true, let source = next() {
            switch source {
            case .deletion:
                deletions.append(deleted[nextDeletion])
                nextDeletion += 1
            case .other:
                added.append(others[nextOther].record)
                addedAnchors.append(others[nextOther].anchor)
                nextOther += 1
            case .sample:
                // next() chose it for its anchor.
                guard let cursor = samples, let rowAnchor = cursor.anchor else { continue }
                added.append(.quantity(try RowDecoder.decodeSample(cursor.statement, vocabulary: &vocabulary, path: path, syncColumn: RowDecoder.sampleSyncColumn) {
                    key throws(StoreError) in try metadataReader.metadata(key, connection)
                }))
                addedAnchors.append(rowAnchor)
                try samples?.advance()
            case .series:
                guard let cursor = series, let rowAnchor = cursor.anchor else { continue }
                added.append(.quantitySeries(try RowDecoder.decodeSeries(
                    cursor.statement, vocabulary: &vocabulary, metadataReader: &metadataReader, connection: connection,
                    path: path)))
                addedAnchors.append(rowAnchor)
                try series?.advance()
            }
        }
        // Cut short: the page ends at its last anchor; otherwise it holds everything up to the
        // store's latest.
        let hasMore = next() != nil
        let cut = hasMore ? max(addedAnchors.last ?? anchor, deletions.last?.anchor ?? anchor) : latest
        return StoreChanges(added: added, addedAnchors: addedAnchors, deleted: deletions, anchor: cut, hasMore: hasMore)
    }

    /// The store's latest anchor, once `anchor` is checked against it and against the purged
    /// tombstones.
    private static func checkedLatestAnchor(_ connection: SQLiteConnection, since anchor: Int64, path: String) throws(StoreError) -> Int64 {
        let bounds = try run(connection, "SELECT latest, purged_through FROM anchors", [], path: path)
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
        return latest
    }

    /// The correlations, heartbeat series and workouts changed after `range`'s anchor (?1), at
    /// most its row limit (?2) of each, by anchor.
    private static func recordsReadWhole(
        _ connection: SQLiteConnection, type: ChangeType?, range: [SQLiteValue], path: String
    ) throws(StoreError) -> [(anchor: Int64, record: HealthRecord)] {
        let wants = { (kind: HealthRecordKind) in type == nil || type?.kind == kind }
        var others: [(anchor: Int64, record: HealthRecord)] = []
        if wants(.correlation) {
            let typeBinding = type.map { SQLiteValue.text($0.identifier) } ?? .null
            for (rowAnchor, correlation) in try RowDecoder.correlations(
                connection,
                where: """
                    c.anchor IN (SELECT anchor FROM correlations WHERE anchor > ?1 AND (?3 IS NULL OR type = ?3)
                        ORDER BY anchor LIMIT ?2)
                    """,
                range + [typeBinding], path: path)
            {
                others.append((rowAnchor, .correlation(correlation)))
            }
        }
        if wants(.heartbeatSeries) {
            for (rowAnchor, series) in try RowDecoder.heartbeatSeries(
                connection, where: "h.anchor IN (SELECT anchor FROM heartbeat_series WHERE anchor > ?1 ORDER BY anchor LIMIT ?2)",
                range, path: path)
            {
                others.append((rowAnchor, .heartbeatSeries(series)))
            }
        }
        if wants(.workout) {
            for (rowAnchor, workout) in try RowDecoder.workouts(
                connection, where: "anchor IN (SELECT anchor FROM workouts WHERE anchor > ?1 ORDER BY anchor LIMIT ?2)",
                range, path: path)
            {
                others.append((rowAnchor, .workout(workout)))
            }
        }
        // Their readers order them by start date.
        others.sort { $0.anchor < $1.anchor }
        return others
    }

    /// A cursor over the rows of `select` (samples `s` or series `q`, named by `alias`) after
    /// `range`'s anchor, by anchor, at most its row limit, with the condition `also`; of the
    /// asked quantity type only when `type` is one (nil when that type was never stored: it has
    /// no rows).
    private static func anchorCursor(
        _ connection: SQLiteConnection, _ select: String, alias: String, also: String, type: ChangeType?, range: [SQLiteValue],
        path: String
    ) throws(StoreError) -> RowCursor? {
        var condition = "\(alias).anchor > ?1" + also
        var bindings = range
        if case .quantity(let quantityType) = type {
            guard let typeID = try StoreVocabulary.typeID(of: quantityType, connection, path: path) else { return nil }
            condition += " AND \(alias).type_id = ?3"
            bindings.append(.integer(typeID))
        }
        return try RowCursor(connection, select + " WHERE \(condition) ORDER BY \(alias).anchor LIMIT ?2", bindings, path: path)
    }

    private static func tombstones(
        _ connection: SQLiteConnection, since anchor: Int64, type: ChangeType?, rowLimit: Int64, path: String
    ) throws(StoreError) -> [StoreChanges.Deletion] {
        let typeBinding = type.map { SQLiteValue.text($0.identifier) } ?? .null
        let rows = try run(
            connection,
            "SELECT anchor, uuid, kind, type, device, person FROM tombstones WHERE anchor > ?1 AND (?3 IS NULL OR type = ?3) ORDER BY anchor LIMIT ?2",
            [.integer(anchor), .integer(rowLimit), typeBinding], path: path)
        return try rows.map { row throws(StoreError) -> StoreChanges.Deletion in
            let id = try RowDecoder.sampleID(row, 1, path: path)
            guard let rowAnchor = row.integer(0), let kind = row.text(2).flatMap(HealthRecordKind.init(rawValue:)),
                let typeName = row.text(3)
            else {
                throw StoreError(.invalidData, path: path, message: "the tombstone of \(id) is malformed")
            }
            return StoreChanges.Deletion(
                id: id, kind: kind, type: typeName, anchor: rowAnchor, device: row.text(4), person: row.text(5))
        }
    }
}
