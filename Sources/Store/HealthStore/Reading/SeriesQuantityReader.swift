import HealthModel
import SQLite

/// Reads the quantities of one type's series whose start lies in a range, each as a sample of
/// its own, in start order: what a sample query lists beside the type's plain samples.
///
/// With a limit it reads no more series than the answer needs: series come in start order, a
/// chunk at a time, and a series' quantities start no earlier than the series and no later than
/// the type's longest span after it, so once `limit` quantities start before the next series
/// (ascending), or after its start plus that span (descending), no later series can displace them.
struct SeriesQuantityReader {
    let connection: SQLiteConnection
    let path: String
    let typeID: Int64
    /// The longest span of a series of the type, in µs.
    let span: Int64
    let filter: SampleFilter
    /// Series read per statement.
    static let chunk = 64

    /// The quantities starting in `[from, to)` (µs), at most `limit` (nil: all), ordered by start
    /// (then id) in the direction asked for.
    func quantities(from: Int64, to: Int64, limit: Int?, ascending: Bool) throws(StoreError) -> [QuantitySample] {
        var found: [QuantitySample] = []
        let condition = filter.condition(alias: "q").sql
        let direction = ascending ? "ASC" : "DESC"
        // Where the next chunk resumes: after (start, anchor) in the direction of the read.
        var resume: (start: Int64, anchor: Int64)?
        while true {
            // Anchors start at 1: ?4 = 0 is the first chunk.
            let after = ascending ? " AND (?4 = 0 OR (q.start_us, q.anchor) > (?3, ?4))" : " AND (?4 = 0 OR (q.start_us, q.anchor) < (?3, ?4))"
            let own: [SQLiteValue] = [
                .integer(typeID), .integer(from.subtractingReportingOverflow(span).overflow ? .min : from - span), .integer(resume?.start ?? 0), .integer(resume?.anchor ?? 0),
            ]
            var rows: [(anchor: Int64, series: QuantitySeriesSample)] = []
            try RowDecoder.forEachSeries(
                connection,
                where: "q.type_id = ?1 AND q.start_us >= ?2 AND q.start_us < \(to)\(after)\(condition)",
                orderBy: "q.start_us \(direction), q.anchor \(direction) LIMIT \(Self.chunk)", filter.bindings(after: own),
                path: path
            ) { anchor, series in rows.append((anchor, series)) }
            for (_, series) in rows {
                for index in series.quantities.indices {
                    let start = StoreTime.microseconds(series.quantities[index].startDate)
                    if start >= from, start < to { found.append(series.quantitySample(at: index)) }
                }
            }
            guard let last = rows.last, rows.count == Self.chunk else { break }
            resume = (StoreTime.microseconds(last.series.startDate), last.anchor)
            if let limit, let boundary = resume, enough(found, limit: limit, next: boundary.start, ascending: ascending) { break }
        }
        found.sort { a, b in ascending ? (a.startDate, a.id) < (b.startDate, b.id) : (a.startDate, a.id) > (b.startDate, b.id) }
        if let limit, found.count > limit { found.removeSubrange(limit...) }
        return found
    }

    /// Whether `limit` of the quantities found are beyond the reach of any series starting at
    /// `next` or later (ascending) or earlier (descending).
    private func enough(_ found: [QuantitySample], limit: Int, next: Int64, ascending: Bool) -> Bool {
        guard found.count >= limit else { return false }
        let settled = found.lazy.filter { sample in
            let start = StoreTime.microseconds(sample.startDate)
            return ascending ? start < next : start > (next.addingReportingOverflow(span).overflow ? .max : next + span)
        }.count
        return settled >= limit
    }
}
