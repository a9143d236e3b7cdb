import AsyncPrimitives
public import FoundationEssentials
public import HealthModel
import SQLite

extension HealthStore {
    // MARK: Samples

    /// The samples of `type` whose start date is in `[from, to)` (either bound may be nil) and
    /// that `filter` matches, ordered by start date (then uuid), at most `limit` of them.
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
            guard let typeID = try StoreVocabulary.typeID(of: type, connection, path: path) else { return [] }
            let bindings: [SQLiteValue] = [
                .integer(typeID), .integer(from.map(StoreTime.microseconds) ?? .min),
                .integer(to.map(StoreTime.microseconds) ?? .max), .integer(Int64(limit ?? -1)),
            ]
            return try RowDecoder.samples(
                connection, where: "s.type_id = ?1 AND s.start_us >= ?2 AND s.start_us < ?3\(filter.condition(alias: "s").sql)",
                orderBy: "s.start_us \(direction), s.uuid \(direction) LIMIT ?4", filter.bindings(after: bindings),
                path: path)
        }
    }

    /// The sample of `type` with the latest start date (ties: the greatest uuid), or nil.
    ///
    /// A short read (one step down the `(type_id, start_us)` index, one device, one metadata
    /// set): it runs in the caller's context, see ``shortRead(oneStatement:_:)``, as one
    /// statement that joins the sample, its unit, its device and its metadata entries.
    public func mostRecentSample(of type: QuantityType) async throws(StoreError) -> QuantitySample? {
        // shortRead's two halves by hand: the inline read allocates no closure, and only the
        // fallback builds the escaping one for the queue.
        let path = self.path
        if let sample = try inlineRead(oneStatement: true, { connection throws(StoreError) in
            try RowDecoder.newestSample(connection, of: type, path: path)
        }) {
            return sample
        }
        return try await read { connection throws(StoreError) in
            try RowDecoder.newestSample(connection, of: type, path: path)
        }
    }

    /// The start date of the oldest sample of `type`, or nil when there is none.
    ///
    /// A short read (the first entry of the `(type, start_us)` index), see ``shortRead(_:)``.
    public func earliestSampleDate(of type: QuantityType) async throws(StoreError) -> Date? {
        try await shortRead { connection throws(StoreError) in
            let rows = try Self.run(
                connection,
                "SELECT min(start_us) FROM samples WHERE type_id = (SELECT id FROM quantity_types WHERE identifier = ?1)",
                [.text(type.identifier)], path: self.path)
            return rows.first?.integer(0).map(StoreTime.date(microseconds:))
        }
    }
}
