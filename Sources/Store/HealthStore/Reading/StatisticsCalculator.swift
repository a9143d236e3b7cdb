import FoundationEssentials
import HealthModel
import SQLite

/// Computes bucketed statistics; see ``HealthStore/statistics(of:from:to:options:filter:)`` for the rules.
/// Buckets are `[edges[k], edges[k+1])` for k in `0..<edges.count - 1`, in µs. Edges need not be
/// evenly spaced, so a calendar day of 23 or 25 hours is one bucket.
enum StatisticsCalculator {
    /// `options` (discrete ones) picks the aggregates: each costs SQLite a function call per
    /// sample, and the most recent value a second statement per bucket.
    static func discrete(
        _ connection: SQLiteConnection, type: QuantityType, edges: [Int64], options: StatisticsOptions = .discrete,
        filter: SampleFilter, path: String
    ) throws(StoreError) -> [QuantityStatistics] {
        let count = edges.count - 1
        guard count > 0 else { return [] }
        guard let spans = try StoreVocabulary.spans(of: type, connection, path: path) else {
            return (0..<count).map { empty(type, $0, edges) }
        }
        let typeID = spans.id
        let series = try discreteSeries(
            connection, type: type, typeID: typeID, span: spans.series, edges: edges, filter: filter, options: options,
            path: path)
        // One range scan of the index on (type, start_us) per bucket, by the same two prepared
        // statements. A single query joining the buckets to the samples would need GROUP BY over
        // the join, which SQLite does with a temporary B-tree: every sample of the range would
        // pass through a sorter, where these scans read the index in order.
        let condition = "s.type_id = ?1 AND s.start_us >= ?2 AND s.start_us < ?3\(filter.condition(alias: "s").sql)"
        // The average from the sum (`total`, a REAL even over no rows), divided by the count of
        // the samples and the series' quantities together: whole values add up exactly, so the
        // average is the same however the values are split between samples and series.
        let columns = [(StatisticsOptions.average, "total"), (.minimum, "min"), (.maximum, "max")].map { option, function in
            options.contains(option) ? "\(function)(s.value)" : "NULL"
        }
        let aggregate = "SELECT count(*), \(columns.joined(separator: ", ")) FROM samples s WHERE \(condition)"
        // The most recent: the latest start, ties going to the greatest uuid, as in
        // ``HealthStore/mostRecentSample(of:)``; one step down the index from the bucket's end.
        let newest = "SELECT s.value, s.start_us FROM samples s WHERE \(condition) ORDER BY s.start_us DESC, s.uuid DESC LIMIT 1"
        return try (0..<count).map { bucket throws(StoreError) -> QuantityStatistics in
            let bindings = filter.bindings(after: [.integer(typeID), .integer(edges[bucket]), .integer(edges[bucket + 1])])
            guard let row = try HealthStore.run(connection, aggregate, bindings, path: path).first,
                let samples = row.integer(0)
            else { throw StoreError(.invalidData, path: path, message: "no statistics row for \(type)") }
            let fromSeries = series[bucket]
            let total = Int(samples) + fromSeries.count
            guard total > 0 else { return empty(type, bucket, edges) }
            var recent: (value: Double?, start: Int64)?
            if options.contains(.mostRecent) {
                if samples > 0 {
                    guard let newestRow = try HealthStore.run(connection, newest, bindings, path: path).first,
                        let newestStart = newestRow.integer(1)
                    else { throw StoreError(.invalidData, path: path, message: "no most recent \(type) sample in a bucket of \(samples)") }
                    recent = (newestRow.double(0), newestStart)
                }
                if fromSeries.count > 0, recent.map({ fromSeries.mostRecentStart > $0.start }) ?? true {
                    recent = (fromSeries.mostRecent, fromSeries.mostRecentStart)
                }
            }
            // The samples' aggregates and the series' combined.
            func combined(_ value: Double?, _ option: StatisticsOptions, _ merge: (Double, Double) -> Double, _ own: Double) -> Double? {
                guard options.contains(option) else { return nil }
                guard fromSeries.count > 0 else { return value }
                return value.map { merge($0, own) } ?? own
            }
            let average: Double? = options.contains(.average) ? ((row.double(1) ?? 0) + fromSeries.sum) / Double(total) : nil
            let (start, stop) = bounds(bucket, edges)
            return QuantityStatistics(
                type: type, startDate: start, endDate: stop, sampleCount: total, average: average,
                minimum: combined(row.double(2), .minimum, min, fromSeries.minimum),
                maximum: combined(row.double(3), .maximum, max, fromSeries.maximum), mostRecent: recent?.value,
                mostRecentDate: recent.map { StoreTime.date(microseconds: $0.start) })
        }
    }

    static func cumulative(
        _ connection: SQLiteConnection, type: QuantityType, edges: [Int64], filter: SampleFilter, path: String
    ) throws(StoreError) -> [QuantityStatistics] {
        let count = edges.count - 1
        guard count > 0, let first = edges.first, let end = edges.last else { return [] }
        // A sample that starts before the range can still reach into it, but by at most the
        // longest duration ever stored for the type, so the index on (type, start_us) bounds the scan.
        guard let (typeID, span) = try StoreVocabulary.typeAndSpan(of: type, connection, path: path) else {
            return (0..<count).map { empty(type, $0, edges) }
        }
        let rows = try HealthStore.run(
            connection,
            """
            SELECT s.start_us, s.start_us + s.duration_us, s.value FROM samples s
            WHERE s.type_id = ?1 AND s.start_us >= ?2 AND s.start_us < ?3
                AND s.start_us + s.duration_us >= ?4\(filter.condition(alias: "s").sql)
            """,
            filter.bindings(after: [.integer(typeID), .integer(first - span), .integer(end), .integer(first)]),
            path: path)
        var sums = [Double](repeating: 0, count: count)
        var counts = [Int](repeating: 0, count: count)
        if let seriesSpan = try StoreVocabulary.spans(of: type, connection, path: path)?.series {
            try forEachSeriesContribution(
                connection, type: type, typeID: typeID, span: seriesSpan + span, edges: edges, filter: filter,
                options: .sum, path: path
            ) { _, contribution in
                switch contribution {
                case .summary(let bucket, let count, let sum, _, _, _, _):
                    sums[bucket] += sum
                    counts[bucket] += count
                case .quantity(let start, let stop, let value):
                    spread(start: start, stop: stop, value: value, edges) { bucket, amount in
                        sums[bucket] += amount
                        counts[bucket] += 1
                    }
                }
            }
        }
        for row in rows {
            guard let start = row.integer(0), let stop = row.integer(1), let value = row.double(2) else {
                throw StoreError(.invalidData, path: path, message: "unexpected sample row for \(type)")
            }
            spread(start: start, stop: stop, value: value, edges) { bucket, amount in
                sums[bucket] += amount
                counts[bucket] += 1
            }
        }
        return (0..<count).map { bucket in
            guard counts[bucket] > 0 else { return empty(type, bucket, edges) }
            let (start, stop) = bounds(bucket, edges)
            return QuantityStatistics(
                type: type, startDate: start, endDate: stop, sampleCount: counts[bucket], sum: sums[bucket])
        }
    }

    /// Calls `add(bucket, amount)` for every bucket a cumulative sample of `value` over
    /// `[start, stop)` contributes to: `value × overlap / duration`, or the whole value to the
    /// bucket holding the start for a sample of zero duration.
    static func spread(
        start: Int64, stop: Int64, value: Double, _ edges: [Int64], _ add: (Int, Double) -> Void
    ) {
        let count = edges.count - 1
        guard count > 0, let first = edges.first, let end = edges.last else { return }
        if stop <= start {
            guard start >= first, start < end else { return }
            add(bucketIndex(containing: start, edges), value)
            return
        }
        let duration = Double(stop - start)
        var bucket = bucketIndex(containing: max(start, first), edges)
        while bucket < count {
            let (lower, upper) = (edges[bucket], edges[bucket + 1])
            if lower >= stop { break }
            let overlap = min(stop, upper) - max(start, lower)
            if overlap > 0 { add(bucket, value * Double(overlap) / duration) }
            bucket += 1
        }
    }

    /// The bucket k with `edges[k] <= time < edges[k+1]`, for `edges.first <= time`; `count` when
    /// `time` is at or after the last edge.
    static func bucketIndex(containing time: Int64, _ edges: [Int64]) -> Int {
        // The last edge that is <= time, by binary search over the sorted edges.
        var (low, high) = (0, edges.count)
        while high - low > 1 {
            let middle = (low + high) / 2
            if edges[middle] <= time { low = middle } else { high = middle }
        }
        return low
    }

    static func bounds(_ bucket: Int, _ edges: [Int64]) -> (Date, Date) {
        (StoreTime.date(microseconds: edges[bucket]), StoreTime.date(microseconds: edges[bucket + 1]))
    }

    static func empty(_ type: QuantityType, _ bucket: Int, _ edges: [Int64]) -> QuantityStatistics {
        let (start, stop) = bounds(bucket, edges)
        return QuantityStatistics(type: type, startDate: start, endDate: stop, sampleCount: 0)
    }
}
