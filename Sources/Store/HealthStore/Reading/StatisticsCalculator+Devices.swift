import HealthModel
import SQLite

/// Statistics per device: one pass over the samples of the range in index order, accumulating
/// each device's values per bucket in Swift. The overall values are not derived from these:
/// ``HealthStore`` takes them from ``StatisticsCalculator/discrete(_:type:edges:options:filter:path:)``
/// and ``StatisticsCalculator/cumulative(_:type:edges:filter:path:)``, so they equal the
/// unseparated statistics exactly.
extension StatisticsCalculator {
    /// Per bucket, the statistics of each device with samples in it, ordered as
    /// ``StatisticsByDevice/devices`` says.
    static func byDevice(
        _ connection: SQLiteConnection, type: QuantityType, edges: [Int64], filter: SampleFilter, path: String
    ) throws(StoreError) -> [[DeviceStatistics]] {
        let count = edges.count - 1
        guard count > 0 else { return [] }
        guard let (typeID, span) = try StoreVocabulary.typeAndSpan(of: type, connection, path: path) else {
            return Array(repeating: [], count: count)
        }
        var accumulators = DeviceAccumulators(
            identities: try deviceIdentities(connection, path: path), type: type, buckets: count, path: path)
        switch type.aggregationStyle {
        case .discrete:
            try accumulateDiscreteSamples(connection, typeID: typeID, edges: edges, filter: filter, into: &accumulators)
        case .cumulative:
            try accumulateCumulativeSamples(connection, typeID: typeID, span: span, edges: edges, filter: filter, into: &accumulators)
        }
        if let seriesSpan = try StoreVocabulary.spans(of: type, connection, path: path)?.series {
            try accumulateSeries(connection, typeID: typeID, span: seriesSpan + span, edges: edges, filter: filter, into: &accumulators)
        }
        return accumulators.statistics(edges: edges)
    }

    /// Adds each sample of a discrete type in the range to its device's bucket.
    private static func accumulateDiscreteSamples(
        _ connection: SQLiteConnection, typeID: Int64, edges: [Int64], filter: SampleFilter,
        into accumulators: inout DeviceAccumulators
    ) throws(StoreError) {
        guard let first = edges.first, let end = edges.last else { return }
        let (type, path, count) = (accumulators.type, accumulators.path, edges.count - 1)
        // Ordered by start date, then uuid, as the index on (type, start_us) holds them (the
        // uuid is the table's key): the last sample of a bucket is its most recent, ties going
        // to the greatest uuid as in ``HealthStore/mostRecentSample(of:)``.
        var bucket = 0
        try forEachRow(
            connection,
            """
            SELECT s.start_us, s.value, s.device_id FROM samples s
            WHERE s.type_id = ?1 AND s.start_us >= ?2 AND s.start_us < ?3\(filter.condition(alias: "s").sql)
            ORDER BY s.start_us, s.uuid
            """,
            filter.bindings(after: [.integer(typeID), .integer(first), .integer(end)]), path: path
        ) { row throws(StoreError) in
            guard let start = row.integer(0), let value = row.double(1) else {
                throw StoreError(.invalidData, path: path, message: "unexpected sample row for \(type)")
            }
            while bucket < count - 1, edges[bucket + 1] <= start { bucket += 1 }
            try accumulators.add(value, at: start, bucket: bucket, device: row.integer(2))
        }
    }

    /// Spreads each sample of a cumulative type that overlaps the range over its device's
    /// buckets; `span` is the type's longest sample, so the query reaches those that began before.
    private static func accumulateCumulativeSamples(
        _ connection: SQLiteConnection, typeID: Int64, span: Int64, edges: [Int64], filter: SampleFilter,
        into accumulators: inout DeviceAccumulators
    ) throws(StoreError) {
        guard let first = edges.first, let end = edges.last else { return }
        let (type, path) = (accumulators.type, accumulators.path)
        try forEachRow(
            connection,
            """
            SELECT s.start_us, s.start_us + s.duration_us, s.value, s.device_id FROM samples s
            WHERE s.type_id = ?1 AND s.start_us >= ?2 AND s.start_us < ?3
                AND s.start_us + s.duration_us >= ?4\(filter.condition(alias: "s").sql)
            """,
            filter.bindings(after: [.integer(typeID), .integer(first - span), .integer(end), .integer(first)]),
            path: path
        ) { row throws(StoreError) in
            guard let start = row.integer(0), let stop = row.integer(1), let value = row.double(2) else {
                throw StoreError(.invalidData, path: path, message: "unexpected sample row for \(type)")
            }
            try accumulators.spread(start: start, stop: stop, value: value, edges: edges, device: row.integer(3))
        }
    }

    /// Adds the type's series: a whole one in a bucket by its summary, the others quantity by
    /// quantity.
    private static func accumulateSeries(
        _ connection: SQLiteConnection, typeID: Int64, span: Int64, edges: [Int64], filter: SampleFilter,
        into accumulators: inout DeviceAccumulators
    ) throws(StoreError) {
        guard let first = edges.first, let end = edges.last else { return }
        let type = accumulators.type
        try forEachSeriesContribution(
            connection, type: type, typeID: typeID, span: span, edges: edges, filter: filter,
            options: .all(for: type.aggregationStyle), devices: true, path: accumulators.path
        ) { deviceID, contribution throws(StoreError) in
            switch contribution {
            case .summary(let bucket, let count, let sum, let minimum, let maximum, let last, let lastStart):
                try accumulators.add(
                    count: count, sum: sum, minimum: minimum, maximum: maximum, last: last, at: lastStart, bucket: bucket, device: deviceID)
            case .quantity(let start, let stop, let value):
                if type.aggregationStyle == .cumulative {
                    try accumulators.spread(start: start, stop: stop, value: value, edges: edges, device: deviceID)
                } else if start >= first, start < end {
                    try accumulators.add(value, at: start, bucket: bucketIndex(containing: start, edges), device: deviceID)
                }
            }
        }
    }

    /// Every stored device's identity, by its row id. The table holds one row per distinct
    /// device description, so it stays small.
    private static func deviceIdentities(
        _ connection: SQLiteConnection, path: String
    ) throws(StoreError) -> [Int64: DeviceIdentity] {
        let rows = try HealthStore.run(
            connection, "SELECT id, name, manufacturer, model, local_identifier FROM devices", [], path: path)
        var identities: [Int64: DeviceIdentity] = [:]
        for row in rows {
            guard let id = row.integer(0) else { throw StoreError(.invalidData, path: path, message: "a device row without id") }
            identities[id] = DeviceIdentity(
                name: row.text(1), manufacturer: row.text(2), model: row.text(3), localIdentifier: row.text(4))
        }
        return identities
    }

    /// Runs `sql` and hands each row to `body` as it is read, so a range of millions of samples
    /// never sits in memory at once.
    static func forEachRow(
        _ connection: SQLiteConnection, _ sql: String, _ bindings: [SQLiteValue], path: String,
        _ body: (SQLiteRow) throws(StoreError) -> Void
    ) throws(StoreError) {
        do {
            let statement = try connection.statement(sql)
            try statement.bind(bindings)
            while try statement.step() {
                try body(statement.row())
            }
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }
}
