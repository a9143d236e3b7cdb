import HealthModel
import SQLite

/// What quantity series add to a type's statistics. A series that lies wholly in one bucket adds
/// the summary its row keeps (count, sum, minimum, maximum, last value), with no look at its
/// quantities; one that crosses a bucket edge, or the range's, is decoded and adds each quantity
/// as a sample would. Each quantity counts as a sample (`sampleCount`), as HealthKit counts a
/// series' quantities.
extension StatisticsCalculator {
    /// What one series gives a statistics pass.
    enum SeriesContribution {
        /// The whole series, in bucket `bucket`; values in the type's canonical unit.
        case summary(bucket: Int, count: Int, sum: Double, minimum: Double, maximum: Double, last: Double, lastStart: Int64)
        /// One quantity over `[start, stop]` (µs), its value in the canonical unit.
        case quantity(start: Int64, stop: Int64, value: Double)
    }

    /// Hands `body` what each series of `typeID` with a quantity in `[edges.first, edges.last)`
    /// (starting there, for a discrete type; reaching into it, for a cumulative one) and that
    /// `filter` matches contributes, with the series' device id.
    static func forEachSeriesContribution(
        _ connection: SQLiteConnection, type: QuantityType, typeID: Int64, span: Int64, edges: [Int64], filter: SampleFilter,
        path: String, _ body: (_ deviceID: Int64?, _ contribution: SeriesContribution) throws(StoreError) -> Void
    ) throws(StoreError) {
        guard let first = edges.first, let end = edges.last, edges.count > 1 else { return }
        let cumulative = type.aggregationStyle == .cumulative
        var factors: [Int64: Double] = [:]
        try forEachRow(
            connection,
            """
            SELECT q.start_us, q.last_start_us, q.end_us, q.count, q.sum, q.minimum, q.maximum, q.last_value, q.unit_id,
                q.device_id, q.quantities, u.unit
            FROM quantity_series q JOIN units u ON u.id = q.unit_id
            WHERE q.type_id = ?1 AND q.start_us >= ?2 AND q.start_us < ?3 AND q.end_us >= ?4\(filter.condition(alias: "q").sql)
            """,
            filter.bindings(after: [.integer(typeID), .integer(first - span), .integer(end), .integer(first)]), path: path
        ) { row throws(StoreError) in
            guard let start = row.integer(0), let lastStart = row.integer(1), let stop = row.integer(2),
                let count = row.integer(3), let unitID = row.integer(8)
            else { throw StoreError(.invalidData, path: path, message: "unexpected series row for \(type)") }
            let deviceID = row.integer(9)
            // Discrete: in a bucket by each quantity's start; cumulative: by its whole interval.
            let low = start
            let high = cumulative ? stop : lastStart
            if low >= first, high < end {
                let bucket = bucketIndex(containing: low, edges)
                if bucket == bucketIndex(containing: high, edges), !(cumulative && high == edges[bucket + 1]) {
                    try body(deviceID, .summary(
                        bucket: bucket, count: Int(count), sum: row.double(4) ?? 0, minimum: row.double(5) ?? 0,
                        maximum: row.double(6) ?? 0, last: row.double(7) ?? 0, lastStart: lastStart))
                    return
                }
            }
            guard let bytes = row.blob(10) else {
                throw StoreError(.invalidData, path: path, message: "a \(type) series has no quantities")
            }
            let factor: Double
            if let known = factors[unitID] {
                factor = known
            } else {
                guard let unit = row.text(11).flatMap({ try? HealthUnit($0) }),
                    let converted = try? Quantity(1, unit).doubleValue(for: type.canonicalUnit)
                else { throw StoreError(.invalidData, path: path, message: "a \(type) series has an invalid unit") }
                factor = unit == type.canonicalUnit ? 1 : converted
                factors[unitID] = factor
            }
            let quantities: [QuantitySeriesEncoding.Quantity]
            do {
                quantities = try QuantitySeriesEncoding.decode(bytes)
            } catch {
                throw StoreError(.invalidData, path: path, message: "a \(type) series: \(error)")
            }
            for quantity in quantities {
                let begin = start &+ quantity.offset
                // A unit with an offset (degC) is not a factor: convert each value then.
                let value = factor == 1 ? quantity.value : convert(quantity.value, unitText: row.text(11), type: type, factor: factor)
                try body(deviceID, .quantity(start: begin, stop: begin &+ quantity.duration, value: value))
            }
        }
    }

    private static func convert(_ value: Double, unitText: String?, type: QuantityType, factor: Double) -> Double {
        guard let unit = unitText.flatMap({ try? HealthUnit($0) }), let converted = try? Quantity(value, unit).doubleValue(for: type.canonicalUnit)
        else { return value * factor }
        return converted
    }

    /// The series' part of a discrete type's statistics per bucket (empty when nothing of the
    /// type was ever stored in a series).
    static func discreteSeries(
        _ connection: SQLiteConnection, type: QuantityType, typeID: Int64, span: Int64, edges: [Int64], filter: SampleFilter,
        path: String
    ) throws(StoreError) -> [Accumulator] {
        var buckets = [Accumulator](repeating: Accumulator(), count: max(0, edges.count - 1))
        guard let first = edges.first, let end = edges.last, !buckets.isEmpty else { return buckets }
        try forEachSeriesContribution(
            connection, type: type, typeID: typeID, span: span, edges: edges, filter: filter, path: path
        ) { _, contribution in
            switch contribution {
            case .summary(let bucket, _, _, _, _, _, _):
                buckets[bucket].add(contribution)
            case .quantity(let start, _, _):
                guard start >= first, start < end else { return }
                buckets[bucketIndex(containing: start, edges)].add(contribution)
            }
        }
        return buckets
    }
}
