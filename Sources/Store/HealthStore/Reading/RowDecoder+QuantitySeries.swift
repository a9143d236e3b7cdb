import FoundationEssentials
import HealthModel
import SQLite

// Quantity series read back: the row and its blob made into a QuantitySeriesSample, with the
// sync keys a receiver needs to tell its versions apart.
extension RowDecoder {
    /// The columns ``decodeSeries(_:vocabulary:metadataReader:connection:path:)`` reads, from
    /// `quantity_series q`; the device by its id, as in ``sampleSelect``.
    static let seriesSelect = """
        SELECT q.anchor, q.uuid, q.type_id, q.unit_id, q.start_us, q.version, q.open, q.metadata_set_id, q.quantities,
            q.device_id
        FROM quantity_series q
        """

    /// The sync identifier a stored series is given: its versions share it, so a receiver
    /// following HealthKit's rule keeps the one with the highest ``Metadata/syncVersion``.
    static func seriesSyncIdentifier(_ id: SampleID) -> String { id.uuidString(after: "quantity-series:") }

    /// Hands each series `condition` selects (on `quantity_series q`), with its anchor, to
    /// `body`, in `orderBy`'s order.
    static func forEachSeries(
        _ connection: SQLiteConnection, where condition: String, orderBy: String, _ bindings: [SQLiteValue], path: String,
        _ body: (_ anchor: Int64, _ series: QuantitySeriesSample) throws(StoreError) -> Void
    ) throws(StoreError) {
        try forEachRow(
            connection, seriesSelect + " WHERE \(condition) ORDER BY \(orderBy)", bindings, path: path
        ) { statement, vocabulary, metadataReader throws(StoreError) in
            let anchor = statement.integer(0) ?? 0
            try body(anchor, try decodeSeries(
                statement, vocabulary: &vocabulary, metadataReader: &metadataReader, connection: connection, path: path))
        }
    }

    /// The series `condition` selects, in `orderBy`'s order, with their anchors.
    static func series(
        _ connection: SQLiteConnection, where condition: String, orderBy: String, _ bindings: [SQLiteValue], path: String
    ) throws(StoreError) -> [(anchor: Int64, series: QuantitySeriesSample)] {
        var result: [(anchor: Int64, series: QuantitySeriesSample)] = []
        try forEachSeries(connection, where: condition, orderBy: orderBy, bindings, path: path) { anchor, series in
            result.append((anchor, series))
        }
        return result
    }

    /// The series in the statement's current row (columns of ``seriesSelect``).
    static func decodeSeries(
        _ statement: SQLiteStatement, vocabulary: inout StoreVocabulary, metadataReader: inout MetadataReader,
        connection: SQLiteConnection, path: String
    ) throws(StoreError) -> QuantitySeriesSample {
        guard let id = statement.withBlob(1, { SampleID(bytes: $0) }) ?? nil else {
            throw StoreError(.invalidData, path: path, message: "a stored series uuid is not 16 bytes")
        }
        // NOT NULL columns, read without asking their type first.
        let (typeID, unitID, start, version) = (statement.int64(2), statement.int64(3), statement.int64(4), statement.int64(5))
        let type = try vocabulary.type(typeID, for: id)
        let unit = try vocabulary.unit(unitID, of: type, for: id)
        // The quantities straight from the blob's bytes in place into their final array.
        let decoded = statement.withBlob(8) { bytes in
            Result { () throws(SeriesEncodingError) in
                try QuantitySeriesEncoding.decode(bytes) { quantity in
                    SeriesQuantity(
                        value: quantity.value, start: StoreTime.date(microseconds: start &+ quantity.offset),
                        end: StoreTime.date(microseconds: start &+ quantity.offset &+ quantity.duration))
                }
            }
        }
        let quantities: [SeriesQuantity]
        switch decoded {
        case .success(let values): quantities = values
        case .failure(let error): throw StoreError(.invalidData, path: path, message: "series \(id): \(error)")
        case nil: throw StoreError(.invalidData, path: path, message: "series \(id) lacks its quantities")
        }
        let device = try Self.device(statement, vocabulary: &vocabulary)
        var metadata = withSyncKeys(
            try metadataReader.metadata(statement.value(7), connection), seriesSyncIdentifier(id), version)
        if statement.int64(6) == 1 { metadata[.provisional] = .bool(true) }
        do {
            return try QuantitySeriesSample(id: id, type: type, unit: unit, quantities: quantities, device: device, metadata: metadata)
        } catch {
            throw StoreError(.invalidData, path: path, message: "series \(id): \(error)")
        }
    }
}

extension RowDecoder {
    /// The quantity of `type`'s series with the latest start (ties: the greatest id, as
    /// ``HealthStore/samples(of:from:to:limit:order:filter:)`` orders them), as a sample of its
    /// own, or nil: the series holding it starts at most the type's longest span before the
    /// latest-starting series, so a few rows of `quantity_series_type_start` are read, and only
    /// those whose last quantity starts latest are decoded.
    static func newestSeriesQuantity(
        _ connection: SQLiteConnection, of type: QuantityType, path: String
    ) throws(StoreError) -> QuantitySample? {
        guard let spans = try StoreVocabulary.spans(of: type, connection, path: path) else { return nil }
        var newest: QuantitySample?
        try forEachSeries(
            connection,
            where: """
                q.type_id = ?1 AND q.start_us >= (SELECT max(start_us) FROM quantity_series WHERE type_id = ?1) - ?2
                    AND q.last_start_us = (SELECT max(last_start_us) FROM quantity_series WHERE type_id = ?1
                        AND start_us >= (SELECT max(start_us) FROM quantity_series WHERE type_id = ?1) - ?2)
                """,
            orderBy: "q.anchor", [.integer(spans.id), .integer(spans.series)], path: path
        ) { _, series in
            // The last quantities may share their start (a series holds readings of one instant).
            guard let last = series.quantities.last?.startDate else { return }
            for index in series.quantities.indices.reversed() where series.quantities[index].startDate == last {
                let sample = series.quantitySample(at: index)
                if newest.map({ sample.id > $0.id }) ?? true { newest = sample }
            }
        }
        return newest
    }

    /// The earliest start of a quantity of `type`'s series, or nil.
    static func earliestSeriesStart(_ connection: SQLiteConnection, of type: QuantityType, path: String) throws(StoreError) -> Int64? {
        try HealthStore.run(
            connection,
            "SELECT min(start_us) FROM quantity_series WHERE type_id = (SELECT id FROM quantity_types WHERE identifier = ?1)",
            [.text(type.identifier)], path: path
        ).first?.integer(0)
    }
}

extension RowDecoder {
    /// The curves stored with the workout `id`, by type.
    static func curves(of id: SampleID, _ connection: SQLiteConnection, path: String) throws(StoreError) -> [WorkoutCurve] {
        let rows = try HealthStore.run(
            connection,
            """
            SELECT t.identifier, c.start_us, c.quantities FROM workout_curves c JOIN quantity_types t ON t.id = c.type_id
            WHERE c.workout_uuid = ?1 ORDER BY t.identifier
            """, [.blob(id.bytes)], path: path)
        return try rows.map { row throws(StoreError) -> WorkoutCurve in
            guard let type = row.text(0).flatMap(QuantityType.named), let start = row.integer(1), let bytes = row.blob(2) else {
                throw StoreError(.invalidData, path: path, message: "workout \(id) has an invalid curve")
            }
            do {
                let points = try QuantitySeriesEncoding.decode(bytes).map { point in
                    SeriesQuantity(
                        value: point.value, start: StoreTime.date(microseconds: start &+ point.offset),
                        end: StoreTime.date(microseconds: start &+ point.offset &+ point.duration))
                }
                return WorkoutCurve(type: type, points: points)
            } catch {
                throw StoreError(.invalidData, path: path, message: "workout \(id)'s \(type) curve: \(error)")
            }
        }
    }
}
