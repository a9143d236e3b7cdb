import HealthModel
import SQLite

// Quantity series: the readings of a type with a series policy are folded into the open series
// of their type, unit, device and metadata as they arrive, and each series changed by a
// transaction is written once at its end, moving to a new anchor (the rule a growing heartbeat
// series follows).
extension RecordWriter {
    /// Folds `sample` into its open series; nil when it is not a series' reading (its type has
    /// no series policy, it has a sync identifier, or it comes late) and is stored as a sample.
    ///
    /// A reading the store holds already is ignored, as a record stored already is: as a
    /// quantity of a series of its key (the same start and value; a batch written again), as a
    /// sample of its own (the same uuid, type and start: a late reading, or one stored before
    /// the store kept series, written again), or as the uuid of a series. So a write stays
    /// idempotent for series readings. Only a reading that does not simply extend its open
    /// series is looked up.
    func fold(_ sample: QuantitySample) throws -> Outcome? {
        guard let policy = sample.type.seriesPolicy, sample.metadata.syncIdentifier == nil else { return nil }
        let (typeID, canonicalUnitID) = try typeIDs(for: sample.type)
        let canonical = sample.quantity.unit == sample.type.canonicalUnit
        let key = OpenQuantitySeries.Key(
            typeID: typeID, unitID: canonical ? canonicalUnitID : try unitID(for: sample.quantity.unit.unitString),
            deviceID: try deviceID(of: sample), metadataSetID: try metadataSetID(for: sample.metadata))
        let start = StoreTime.microseconds(sample.startDate)
        let end = StoreTime.microseconds(sample.endDate)
        let recorded = sample.quantity.value
        let value = canonical ? recorded : sample.canonicalValue
        let now = uptime()
        let open = try openSeries(key)
        if var series = open {
            switch series.fit(start: start, recorded: recorded, policy: policy) {
            case .append:
                series.append(start: start, end: end, recorded: recorded, canonical: value, now: now)
                openSeries.stage(series)
                return .inserted
            case .duplicate:
                return .ignored
            case .outOfOrder:
                return try holds(sample.id, start: start, recorded: recorded, key: key, open: series) ? .ignored : nil
            case .closeAndStart:
                break
            }
        }
        if try holds(sample.id, start: start, recorded: recorded, key: key, open: open) { return .ignored }
        if let open { openSeries.close(open) }
        // The first reading's uuid names the series: a time-ordered id, as every object's.
        openSeries.stage(OpenQuantitySeries(
            id: sample.id, type: sample.type, key: key, start: start, end: end, recorded: recorded, canonical: value, now: now))
        return .inserted
    }

    /// Whether the store holds the reading `id` (µs `start`, `recorded` in the key's unit)
    /// already: as a quantity of `key`'s open series (as the transaction left it) or of a
    /// stored series of `key` whose quantities reach over `start`, as a sample (by the sample
    /// index, `samples_type_start`), or as the uuid of a series.
    private func holds(
        _ id: SampleID, start: Int64, recorded: Double, key: OpenQuantitySeries.Key, open: OpenQuantitySeries?
    ) throws -> Bool {
        func contains(_ bytes: [UInt8], from seriesStart: Int64) -> Bool {
            guard let quantities = try? QuantitySeriesEncoding.decode(bytes) else { return false }
            return quantities.contains { seriesStart &+ $0.offset == start && $0.value == recorded }
        }
        if let open, open.startUs <= start, start <= open.lastStartUs, contains(open.encoded.bytes, from: open.startUs) {
            return true
        }
        let uuid = SQLiteValue.blob(id.bytes)
        let asSample = try connection.query(
            "SELECT 1 FROM samples WHERE type_id = ?1 AND start_us = ?2 AND uuid = ?3", [.integer(key.typeID), .integer(start), uuid])
        if !asSample.isEmpty { return true }
        if try connection.query("SELECT 1 FROM quantity_series WHERE uuid = ?1", [uuid]).isEmpty == false {
            return true
        }
        let span = try seriesSpan(of: key.typeID)
        let rows = try connection.query(
            """
            SELECT start_us, quantities FROM quantity_series
            WHERE type_id = ?1 AND start_us <= ?2 AND start_us >= ?2 - ?3 AND last_start_us >= ?2 AND unit_id = ?4
                AND device_id IS ?5 AND metadata_set_id IS ?6
            """,
            [.integer(key.typeID), .integer(start), .integer(span), .integer(key.unitID),
             key.deviceID.map(SQLiteValue.integer) ?? .null, key.metadataSetID.map(SQLiteValue.integer) ?? .null])
        return rows.contains { row in
            guard let seriesStart = row.integer(0), let bytes = row.blob(1) else { return false }
            return contains(bytes, from: seriesStart)
        }
    }

    /// The longest span of a stored series of the type `typeID` (µs), cached like the spans.
    private func seriesSpan(of typeID: Int64) throws(SQLiteError) -> Int64 {
        if let known = seriesSpans[typeID] { return known }
        let span = try connection.query(
            "SELECT max_series_span_us FROM quantity_types WHERE id = ?1", [.integer(typeID)]).first?.integer(0) ?? 0
        seriesSpans[typeID] = span
        return span
    }

    /// The open series of `key`, its row confirmed once per transaction: another process
    /// (`healthgate delete`) or this writer's pruning, deletion or clock correction may have
    /// deleted or changed it, and a series whose row is not as the writer left it is neither
    /// added to nor closed (it is forgotten; the next reading starts a series of its own).
    private func openSeries(_ key: OpenQuantitySeries.Key) throws(SQLiteError) -> OpenQuantitySeries? {
        guard let series = openSeries[key] else { return nil }
        guard let anchor = series.anchor, !openSeries.isChecked(key) else { return series }
        openSeries.markChecked(key)
        let row = try connection.query("SELECT version, open FROM quantity_series WHERE anchor = ?1", [.integer(anchor)]).first
        guard row?.integer(0) == series.version, row?.integer(1) == 1 else {
            openSeries.drop(key)
            return nil
        }
        return series
    }

    /// Closes the open series nothing was added to for their policy's gap, on the monotonic
    /// clock (the device went away); only inside ``transaction(_:)``.
    func closeIdleSeries() throws(SQLiteError) {
        let now = uptime()
        for series in openSeries.all {
            guard let policy = series.type.seriesPolicy, now - series.lastGrew >= policy.maximumGap,
                let confirmed = try openSeries(series.key)
            else { continue }
            openSeries.close(confirmed)
        }
    }

    /// Closes every open series this writer added to (the store is closing); only inside
    /// ``transaction(_:)``. A series another process left open stays as it is.
    func closeAllSeries() throws(SQLiteError) {
        for series in openSeries.all where series.grewHere {
            guard let confirmed = try openSeries(series.key) else { continue }
            openSeries.close(confirmed)
        }
    }

    /// Writes the series the transaction changed: each takes a new anchor, open ones with
    /// `open` 1, closed ones with 0, every one at its next version. Only inside
    /// ``transaction(_:)``, once, after its records.
    ///
    /// A new anchor is a new rowid, so each row moves to the table's end. All the old rows go
    /// first, then the new ones are inserted: the old ones sat at the end (the open series moved
    /// there last commit), so the pages they leave are the ones the new rows fill. Moved one by
    /// one, each row would leave a hole in a page the inserts never reach again.
    func writeSeriesChanges() throws(SQLiteError) {
        // In the order of their last readings, so that anchors follow time: a follower's newest
        // message of a device's type is its latest reading (the closed ones end first).
        func order(_ series: [OpenQuantitySeries]) -> [OpenQuantitySeries] {
            series.sorted { ($0.lastStartUs, $0.id) < ($1.lastStartUs, $1.id) }
        }
        let closed = order(openSeries.closed), changed = order(openSeries.changed)
        for stored in (closed + changed).compactMap(\.anchor) {
            try connection.run("DELETE FROM quantity_series WHERE anchor = ?1", [.integer(stored)])
        }
        for series in closed { _ = try writeSeriesRow(series, open: false) }
        for series in changed {
            openSeries.written(try writeSeriesRow(series, open: true))
        }
    }

    /// Inserts the row of `series` (its old row, if any, already deleted); returns it with its
    /// new anchor and version.
    private func writeSeriesRow(_ series: OpenQuantitySeries, open: Bool) throws(SQLiteError) -> OpenQuantitySeries {
        var written = series
        let anchor = nextAnchor()
        if series.anchor != nil { written.version = series.version + 1 }
        try connection.run(
            """
            INSERT INTO quantity_series (anchor, start_us, end_us, last_start_us, count, sum, minimum, maximum,
                last_value, open, quantities, version, uuid, type_id, unit_id, device_id, metadata_set_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
            """,
            [
                .integer(anchor), .integer(series.startUs), .integer(series.endUs), .integer(series.lastStartUs),
                .integer(Int64(series.count)), .real(series.sum), .real(series.minimum), .real(series.maximum),
                .real(series.lastValue), .integer(open ? 1 : 0), .blob(series.encoded.bytes),
                .integer(written.version), .blob(series.id.bytes), .integer(series.key.typeID), .integer(series.key.unitID),
                series.key.deviceID.map(SQLiteValue.integer) ?? .null,
                series.key.metadataSetID.map(SQLiteValue.integer) ?? .null,
            ])
        if series.anchor == nil, hasTombstones { try removeTombstone(of: series.id) }
        written.anchor = anchor
        let span = series.endUs - series.startUs
        if span > seriesSpans[series.key.typeID] ?? 0 {
            try connection.run(
                "UPDATE quantity_types SET max_series_span_us = ?2 WHERE id = ?1 AND max_series_span_us < ?2",
                [.integer(series.key.typeID), .integer(span)])
            seriesSpans[series.key.typeID] = span
        }
        transactionBytes += LogRetention.quantitySeriesBytes(count: series.count)
        return written
    }

    /// Reads the open series back from their rows (at open, and after a failed transaction
    /// left the writer's view of them unknown).
    func loadOpenSeries() throws(SQLiteError) {
        let rows = try connection.query(
            """
            SELECT q.anchor, q.uuid, t.identifier, q.type_id, q.unit_id, q.device_id, q.metadata_set_id, q.start_us,
                q.last_start_us, q.end_us, q.sum, q.minimum, q.maximum, q.last_value, q.version, q.quantities,
                t.max_series_span_us
            FROM quantity_series q JOIN quantity_types t ON t.id = q.type_id WHERE q.open = 1
            """)
        let now = uptime()
        var loaded: [OpenQuantitySeries] = []
        for row in rows {
            guard let anchor = row.integer(0), let id = row.blob(1).flatMap({ SampleID(bytes: $0) }),
                let type = row.text(2).flatMap(QuantityType.named), let typeID = row.integer(3), let unitID = row.integer(4),
                let start = row.integer(7), let lastStart = row.integer(8), let end = row.integer(9),
                let bytes = row.blob(15), let encoded = try? QuantitySeriesEncoding.Appender(decoding: bytes),
                let last = try? QuantitySeriesEncoding.decode(bytes).last
            else { continue }
            seriesSpans[typeID] = max(seriesSpans[typeID] ?? 0, row.integer(16) ?? 0)
            loaded.append(OpenQuantitySeries(
                id: id, type: type,
                key: OpenQuantitySeries.Key(typeID: typeID, unitID: unitID, deviceID: row.integer(5), metadataSetID: row.integer(6)),
                anchor: anchor, startUs: start, lastStartUs: lastStart, endUs: end, sum: row.double(10) ?? 0,
                minimum: row.double(11) ?? 0, maximum: row.double(12) ?? 0, lastValue: row.double(13) ?? 0,
                version: row.integer(14) ?? 1, encoded: encoded, lastRecorded: last.value, now: now))
        }
        openSeries.load(loaded)
    }
}

extension RecordWriter {
    /// Stores a series given whole (a clock correction moving one, a series received from
    /// elsewhere): by uuid, a later version (a higher ``Metadata/syncVersion``; none counts as 1)
    /// replaces the stored one at a new anchor, an earlier or equal one is ignored. It is stored
    /// closed: only the series the writer folds itself grow.
    func write(_ series: QuantitySeriesSample) throws -> Outcome {
        let (typeID, canonicalUnitID) = try typeIDs(for: series.type)
        let unitID = series.unit == series.type.canonicalUnit ? canonicalUnitID : try unitID(for: series.unit.unitString)
        var kept = series.metadata
        kept[.provisional] = nil
        let version = series.metadata.syncVersion ?? 1
        let uuid = SQLiteValue.blob(series.id.bytes)
        let stored = try connection.query("SELECT anchor, version FROM quantity_series WHERE uuid = ?1", [uuid]).first
        if let stored, version <= stored.integer(1) ?? 0 { return .ignored }
        let start = StoreTime.microseconds(series.startDate)
        let canonical = series.quantities.map { quantity in
            (try? Quantity(quantity.value, series.unit).doubleValue(for: series.type.canonicalUnit)) ?? quantity.value
        }
        let encoded = QuantitySeriesEncoding.encode(series.quantities.map { quantity in
            let begin = StoreTime.microseconds(quantity.startDate)
            return QuantitySeriesEncoding.Quantity(
                offset: begin - start, duration: StoreTime.microseconds(quantity.endDate) - begin, value: quantity.value)
        })
        let lastStart = series.quantities.last.map { StoreTime.microseconds($0.startDate) } ?? start
        let values: [SQLiteValue] = [
            .integer(nextAnchor()), .integer(start), .integer(StoreTime.microseconds(series.endDate)), .integer(lastStart),
            .integer(Int64(series.count)), .real(canonical.reduce(0, +)), .real(canonical.min() ?? 0),
            .real(canonical.max() ?? 0), .real(canonical.last ?? 0), .integer(0), .blob(encoded), .integer(version),
            uuid, .integer(typeID), .integer(unitID), try deviceID(for: series.device).map(SQLiteValue.integer) ?? .null,
            try metadataSetID(for: kept).map(SQLiteValue.integer) ?? .null,
        ]
        if let anchor = stored?.integer(0) {
            try connection.run("DELETE FROM quantity_series WHERE anchor = ?1", [.integer(anchor)])
        }
        try connection.run(
            """
            INSERT INTO quantity_series (anchor, start_us, end_us, last_start_us, count, sum, minimum, maximum,
                last_value, open, quantities, version, uuid, type_id, unit_id, device_id, metadata_set_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
            """, values)
        if hasTombstones { try removeTombstone(of: series.id) }
        let span = StoreTime.microseconds(series.endDate) - start
        if span > seriesSpans[typeID] ?? 0 {
            try connection.run(
                "UPDATE quantity_types SET max_series_span_us = ?2 WHERE id = ?1 AND max_series_span_us < ?2",
                [.integer(typeID), .integer(span)])
            seriesSpans[typeID] = span
        }
        return stored == nil ? .inserted : .replaced
    }
}

extension RecordWriter {
    /// Closes the idle open series in a transaction of their own, when there are any.
    /// - Returns: how many it closed.
    func closeIdleSeriesNow() throws(StoreError) -> Int {
        let now = uptime()
        let idle = openSeries.all.contains { series in
            series.type.seriesPolicy.map { now - series.lastGrew >= $0.maximumGap } ?? false
        }
        guard idle else { return 0 }
        return try transaction { () throws -> Int in
            try closeIdleSeries()
            return openSeries.closed.count
        }
    }
}
