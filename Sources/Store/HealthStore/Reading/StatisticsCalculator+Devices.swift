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
        guard count > 0, let first = edges.first, let end = edges.last else { return [] }
        guard let (typeID, span) = try StoreVocabulary.typeAndSpan(of: type, connection, path: path) else {
            return Array(repeating: [], count: count)
        }
        let identities = try deviceIdentities(connection, path: path)
        var accumulators: [DeviceIdentity?: [Accumulator]] = [:]
        func identity(of deviceID: Int64?) throws(StoreError) -> DeviceIdentity? {
            guard let deviceID else { return nil }
            guard let identity = identities[deviceID] else {
                throw StoreError(.invalidData, path: path, message: "a \(type) sample names device \(deviceID), which is not stored")
            }
            return identity
        }
        switch type.aggregationStyle {
        case .discrete:
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
                let key = try identity(of: row.integer(2))
                accumulators[key, default: Array(repeating: Accumulator(), count: count)][bucket].add(value, at: start)
            }
        case .cumulative:
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
                let key = try identity(of: row.integer(3))
                spread(start: start, stop: stop, value: value, edges) { bucket, amount in
                    accumulators[key, default: Array(repeating: Accumulator(), count: count)][bucket].add(amount, at: start)
                }
            }
        }
        // The series: a whole one in a bucket by its summary, the others quantity by quantity.
        if let seriesSpan = try StoreVocabulary.spans(of: type, connection, path: path)?.series {
            try forEachSeriesContribution(
                connection, type: type, typeID: typeID, span: seriesSpan + span, edges: edges, filter: filter,
                options: .all(for: type.aggregationStyle), devices: true, path: path
            ) { deviceID, contribution throws(StoreError) in
                let key = try identity(of: deviceID)
                switch contribution {
                case .summary(let bucket, let count, let sum, let minimum, let maximum, let last, let lastStart):
                    accumulators[key, default: Array(repeating: Accumulator(), count: edges.count - 1)][bucket]
                        .add(count: count, sum: sum, minimum: minimum, maximum: maximum, last: last, at: lastStart)
                case .quantity(let start, let stop, let value):
                    if type.aggregationStyle == .cumulative {
                        spread(start: start, stop: stop, value: value, edges) { bucket, amount in
                            accumulators[key, default: Array(repeating: Accumulator(), count: edges.count - 1)][bucket].add(amount, at: start)
                        }
                    } else if start >= first, start < end {
                        accumulators[key, default: Array(repeating: Accumulator(), count: edges.count - 1)][
                            bucketIndex(containing: start, edges)].add(value, at: start)
                    }
                }
            }
        }
        // Named devices first in their order, then the samples without a device.
        let order = accumulators.keys.sorted { left, right in
            switch (left, right) {
            case let (left?, right?): left < right
            case (.some, nil): true
            case (nil, _): false
            }
        }
        return (0..<count).map { bucket in
            let (start, stop) = bounds(bucket, edges)
            return order.compactMap { key -> DeviceStatistics? in
                guard let values = accumulators[key]?[bucket], values.count > 0 else { return nil }
                let statistics = switch type.aggregationStyle {
                case .discrete:
                    QuantityStatistics(
                        type: type, startDate: start, endDate: stop, sampleCount: values.count,
                        average: values.sum / Double(values.count), minimum: values.minimum, maximum: values.maximum,
                        mostRecent: values.mostRecent,
                        mostRecentDate: StoreTime.date(microseconds: values.mostRecentStart))
                case .cumulative:
                    QuantityStatistics(type: type, startDate: start, endDate: stop, sampleCount: values.count, sum: values.sum)
                }
                return DeviceStatistics(device: key?.device, statistics: statistics)
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
