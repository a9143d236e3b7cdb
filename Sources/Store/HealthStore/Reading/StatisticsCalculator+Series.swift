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
    /// `filter` matches contributes, with the series' device id when `devices` is true (nil
    /// otherwise).
    ///
    /// A summary carries its count and sum, and of the other values only those `options` ask
    /// for: the others are the neutral values an ``Accumulator`` ignores (a minimum of +∞, a
    /// maximum of −∞, a last value at `Int64.min`). The scan reads those columns straight from
    /// the statement, and no blob or unit: a year holds half a million series, nearly all inside
    /// one bucket, and reading every column of each row, its quantities and unit string
    /// included, into Swift values cost more than SQLite's whole scan. Only a series across an
    /// edge has its quantities read, by its key.
    static func forEachSeriesContribution(
        _ connection: SQLiteConnection, type: QuantityType, typeID: Int64, span: Int64, edges: [Int64], filter: SampleFilter,
        options: StatisticsOptions, devices: Bool = false, path: String,
        _ body: (_ deviceID: Int64?, _ contribution: SeriesContribution) throws(StoreError) -> Void
    ) throws(StoreError) {
        guard let first = edges.first, let end = edges.last, edges.count > 1 else { return }
        let cumulative = type.aggregationStyle == .cumulative
        let (minimum, maximum, mostRecent) =
            (options.contains(.minimum), options.contains(.maximum), options.contains(.mostRecent))
        func column(_ name: String, if wanted: Bool) -> String { wanted ? "q.\(name)" : "NULL" }
        var factors: [String?: Double] = [:]
        let statement: SQLiteStatement
        do {
            // Columns 0 to 3 always; 4 to 8 as asked (NULL otherwise, which costs SQLite nothing);
            // 9, the key, for a series across an edge.
            statement = try connection.statement(
                """
                SELECT q.start_us, \(cumulative ? "q.end_us" : "q.last_start_us"), q.count, q.sum, \(column("minimum", if: minimum)),
                    \(column("maximum", if: maximum)), \(column("last_value", if: mostRecent)),
                    \(column("last_start_us", if: mostRecent)), \(column("device_id", if: devices)), q.anchor
                FROM quantity_series q
                WHERE q.type_id = ?1 AND q.start_us >= ?2 AND q.start_us < ?3 AND q.end_us >= ?4\(filter.condition(alias: "q").sql)
                """)
            try statement.bind(filter.bindings(after: [.integer(typeID), .integer(first - span), .integer(end), .integer(first)]))
        } catch {
            throw StoreError(error, path: path)
        }
        // A row that fails leaves the statement mid-way: reset it, so that it does not keep reading.
        do throws(StoreError) {
            while try RowDecoder.step(statement, path: path) {
                // The schema declares every column read here NOT NULL but the device.
                let start = statement.int64(0)
                // Discrete: in a bucket by each quantity's start; cumulative: by its whole interval.
                let stop = statement.int64(1)
                let deviceID = devices ? statement.integer(8) : nil
                if start >= first, stop < end {
                    let bucket = bucketIndex(containing: start, edges)
                    if bucket == bucketIndex(containing: stop, edges), !(cumulative && stop == edges[bucket + 1]) {
                        try body(deviceID, .summary(
                            bucket: bucket, count: Int(statement.int64(2)), sum: statement.real(3),
                            minimum: minimum ? statement.real(4) : .infinity, maximum: maximum ? statement.real(5) : -.infinity,
                            last: mostRecent ? statement.real(6) : 0, lastStart: mostRecent ? statement.int64(7) : .min))
                        continue
                    }
                }
                let (bytes, unitText) = try seriesQuantities(connection, anchor: statement.int64(9), type: type, path: path)
                let factor: Double
                if let known = factors[unitText] {
                    factor = known
                } else {
                    guard let unit = unitText.flatMap({ try? HealthUnit($0) }),
                        let converted = try? Quantity(1, unit).doubleValue(for: type.canonicalUnit)
                    else { throw StoreError(.invalidData, path: path, message: "a \(type) series has an invalid unit") }
                    factor = unit == type.canonicalUnit ? 1 : converted
                    factors[unitText] = factor
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
                    let value = factor == 1 ? quantity.value : convert(quantity.value, unitText: unitText, type: type, factor: factor)
                    try body(deviceID, .quantity(start: begin, stop: begin &+ quantity.duration, value: value))
                }
            }
        } catch {
            statement.reset()
            throw error
        }
    }

    /// The encoded quantities and the unit string of the series with `anchor`.
    private static func seriesQuantities(
        _ connection: SQLiteConnection, anchor: Int64, type: QuantityType, path: String
    ) throws(StoreError) -> (bytes: [UInt8], unit: String?) {
        guard let row = try HealthStore.run(
            connection,
            "SELECT q.quantities, u.unit FROM quantity_series q JOIN units u ON u.id = q.unit_id WHERE q.anchor = ?1",
            [.integer(anchor)], path: path
        ).first, let bytes = row.blob(0) else {
            throw StoreError(.invalidData, path: path, message: "a \(type) series has no quantities")
        }
        return (bytes, row.text(1))
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
        options: StatisticsOptions, path: String
    ) throws(StoreError) -> [Accumulator] {
        var buckets = [Accumulator](repeating: Accumulator(), count: max(0, edges.count - 1))
        guard let first = edges.first, let end = edges.last, !buckets.isEmpty else { return buckets }
        try forEachSeriesContribution(
            connection, type: type, typeID: typeID, span: span, edges: edges, filter: filter, options: options, path: path
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
