import AsyncPrimitives
public import FoundationEssentials
public import HealthModel
import SQLite

extension HealthStore {
    // MARK: Samples

    /// The samples of `type` whose start date is in `[from, to)` (either bound may be nil) and
    /// that `filter` matches, ordered by start date (then uuid), at most `limit` of them.
    ///
    /// A quantity series' quantities are listed one by one, each as a sample of its own
    /// (``HealthModel/QuantitySeriesSample/quantitySample(at:)``: its id derived from the series',
    /// ``HealthModel/MetadataKey/series`` naming the series), as HKQuantitySeriesSampleQuery
    /// enumerates them; a filter matches a series' quantities as it matches the series.
    public func samples(
        of type: QuantityType, from: Date? = nil, to: Date? = nil, limit: Int? = nil,
        order: SampleOrder = .ascending, filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> [QuantitySample] {
        if let limit, limit < 0 {
            throw StoreError(.invalidArgument, path: path, message: "limit must not be negative, got \(limit)")
        }
        let direction = order == .ascending ? "ASC" : "DESC"
        let path = self.path
        return try await read { connection throws(StoreError) in
            guard let spans = try StoreVocabulary.spans(of: type, connection, path: path) else { return [] }
            let lower = from.map(StoreTime.microseconds) ?? .min
            let upper = to.map(StoreTime.microseconds) ?? .max
            let bindings: [SQLiteValue] = [.integer(spans.id), .integer(lower), .integer(upper), .integer(Int64(limit ?? -1))]
            let plain = try RowDecoder.samples(
                connection, where: "s.type_id = ?1 AND s.start_us >= ?2 AND s.start_us < ?3\(filter.condition(alias: "s").sql)",
                orderBy: "s.start_us \(direction), s.uuid \(direction) LIMIT ?4", filter.bindings(after: bindings),
                path: path)
            let quantities = try SeriesQuantityReader(
                connection: connection, path: path, typeID: spans.id, span: spans.series, filter: filter
            ).quantities(from: lower, to: upper, limit: limit, ascending: order == .ascending)
            guard !quantities.isEmpty else { return plain }
            let ascending = order == .ascending
            var merged = plain + quantities
            merged.sort { a, b in
                ascending ? (a.startDate, a.id) < (b.startDate, b.id) : (a.startDate, a.id) > (b.startDate, b.id)
            }
            if let limit, merged.count > limit { merged.removeSubrange(limit...) }
            return merged
        }
    }

    /// The sample of `type` with the latest start date (ties: the greatest uuid), or nil; a
    /// series' quantity counts as a sample (``samples(of:from:to:limit:order:filter:)``).
    ///
    /// A short read (one step down the `(type_id, start_us)` indexes of samples and series, one
    /// device, one metadata set): it runs in the caller's context, see ``shortRead(oneStatement:_:)``.
    public func mostRecentSample(of type: QuantityType) async throws(StoreError) -> QuantitySample? {
        let path = self.path
        return try await shortRead { connection throws(StoreError) in
            let plain = try RowDecoder.newestSample(connection, of: type, path: path)
            guard let series = try RowDecoder.newestSeriesQuantity(connection, of: type, path: path) else { return plain }
            guard let plain else { return series }
            return (series.startDate, series.id) > (plain.startDate, plain.id) ? series : plain
        }
    }

    /// The start date of the oldest sample of `type` (a series' quantities included), or nil
    /// when there is none.
    ///
    /// A short read (the first entry of the `(type, start_us)` indexes), see ``shortRead(_:)``.
    public func earliestSampleDate(of type: QuantityType) async throws(StoreError) -> Date? {
        try await shortRead { connection throws(StoreError) in
            let rows = try Self.run(
                connection,
                "SELECT min(start_us) FROM samples WHERE type_id = (SELECT id FROM quantity_types WHERE identifier = ?1)",
                [.text(type.identifier)], path: self.path)
            let starts = [rows.first?.integer(0), try RowDecoder.earliestSeriesStart(connection, of: type, path: self.path)]
            return starts.compactMap { $0 }.min().map(StoreTime.date(microseconds:))
        }
    }
}
