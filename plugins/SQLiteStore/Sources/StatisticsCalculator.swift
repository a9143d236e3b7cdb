import Foundation
import HealthModel
import SQLite

/// Computes bucketed statistics; see ``SQLiteSampleStore/statistics(of:from:to:)`` for the rules.
/// Buckets are `[firstBucket + k·width, firstBucket + (k+1)·width)` for k in `0..<count`, in µs.
enum StatisticsCalculator {
    static func discrete(
        _ connection: SQLiteConnection, type: QuantityType, firstBucket: Int64, width: Int64, count: Int,
        path: String
    ) throws(StoreError) -> [QuantityStatistics] {
        let end = firstBucket + width * Int64(count)
        // With exactly one max() aggregate, SQLite takes the bare columns (value, uuid) from the
        // row holding the maximum (https://sqlite.org/lang_select.html#bareagg): the most recent.
        let rows = try SQLiteSampleStore.run(
            connection,
            """
            SELECT (start_us - ?2) / ?3 AS bucket, count(*), avg(value), min(value), max(value),
                max(start_us), value
            FROM samples WHERE type = ?1 AND start_us >= ?2 AND start_us < ?4
            GROUP BY bucket
            """,
            [.text(type.identifier), .integer(firstBucket), .integer(width), .integer(end)], path: path)
        var filled: [Int: QuantityStatistics] = [:]
        for row in rows {
            guard let bucket = row.integer(0).map(Int.init), (0..<count).contains(bucket),
                let samples = row.integer(1), let recentStart = row.integer(5)
            else { throw StoreError(.invalidData, path: path, message: "unexpected statistics row for \(type)") }
            let (start, stop) = bounds(bucket, firstBucket, width)
            filled[bucket] = QuantityStatistics(
                type: type, startDate: start, endDate: stop, sampleCount: Int(samples), average: row.double(2),
                minimum: row.double(3), maximum: row.double(4), mostRecent: row.double(6),
                mostRecentDate: SQLiteSampleWriter.date(microseconds: recentStart))
        }
        return (0..<count).map { bucket in
            filled[bucket] ?? empty(type, bucket, firstBucket, width)
        }
    }

    static func cumulative(
        _ connection: SQLiteConnection, type: QuantityType, firstBucket: Int64, width: Int64, count: Int,
        path: String
    ) throws(StoreError) -> [QuantityStatistics] {
        let end = firstBucket + width * Int64(count)
        // A sample that starts before the range can still reach into it, but by at most the
        // longest duration ever stored for the type, so the index on (type, start_us) bounds the scan.
        let span = try SQLiteSampleStore.run(
            connection, "SELECT max_duration_us FROM sample_type_spans WHERE type = ?1", [.text(type.identifier)],
            path: path
        ).first?.integer(0) ?? 0
        let rows = try SQLiteSampleStore.run(
            connection,
            """
            SELECT start_us, end_us, value FROM samples
            WHERE type = ?1 AND start_us >= ?2 AND start_us < ?3 AND end_us >= ?4
            """,
            [.text(type.identifier), .integer(firstBucket - span), .integer(end), .integer(firstBucket)], path: path)
        var sums = [Double](repeating: 0, count: count)
        var counts = [Int](repeating: 0, count: count)
        for row in rows {
            guard let start = row.integer(0), let stop = row.integer(1), let value = row.double(2) else {
                throw StoreError(.invalidData, path: path, message: "unexpected sample row for \(type)")
            }
            if stop <= start {
                // Zero duration: wholly in the bucket containing its start.
                guard start >= firstBucket, start < end else { continue }
                let bucket = Int((start - firstBucket) / width)
                sums[bucket] += value
                counts[bucket] += 1
                continue
            }
            let duration = Double(stop - start)
            var bucket = Int((max(start, firstBucket) - firstBucket) / width)
            while bucket < count {
                let (lower, upper) = (firstBucket + Int64(bucket) * width, firstBucket + Int64(bucket + 1) * width)
                if lower >= stop { break }
                let overlap = min(stop, upper) - max(start, lower)
                if overlap > 0 {
                    sums[bucket] += value * Double(overlap) / duration
                    counts[bucket] += 1
                }
                bucket += 1
            }
        }
        return (0..<count).map { bucket in
            guard counts[bucket] > 0 else { return empty(type, bucket, firstBucket, width) }
            let (start, stop) = bounds(bucket, firstBucket, width)
            return QuantityStatistics(
                type: type, startDate: start, endDate: stop, sampleCount: counts[bucket], sum: sums[bucket])
        }
    }

    private static func bounds(_ bucket: Int, _ first: Int64, _ width: Int64) -> (Date, Date) {
        (SQLiteSampleWriter.date(microseconds: first + Int64(bucket) * width),
         SQLiteSampleWriter.date(microseconds: first + Int64(bucket + 1) * width))
    }

    private static func empty(_ type: QuantityType, _ bucket: Int, _ first: Int64, _ width: Int64) -> QuantityStatistics {
        let (start, stop) = bounds(bucket, first, width)
        return QuantityStatistics(type: type, startDate: start, endDate: stop, sampleCount: 0)
    }
}
