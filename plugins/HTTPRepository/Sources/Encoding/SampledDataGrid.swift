import FoundationEssentials

/// Where a series' quantities go in a FHIR R4 SampledData: its data points are a regular grid,
/// point `k` at the Observation's start plus `k × period` (milliseconds), each a decimal or `E`
/// (no valid value), and a series' quantities are not quite regular (a strap's notifications
/// jitter, and one goes missing now and then).
///
/// - The period is the median step between the quantities' starts (a missing reading does not
///   move it), refined by least squares over the grid positions it gives them until they settle,
///   so that a median a little off the device's true rate does not pile its error up along the
///   series;
///   at least a millisecond, and at least a quarter of the mean step, so the grid never has more
///   than about four points per quantity. A series of one quantity has a period of a second.
/// - Each quantity takes the grid point nearest its own start that no earlier quantity took, so
///   none is lost and their order is kept; a grid point no quantity took is `E` (the device sent
///   nothing then). A series taken at a regular rate lands exactly on its own times.
///
/// Pure: dates in, grid out.
struct SampledDataGrid: Hashable {
    /// Microseconds between grid points.
    let periodMicroseconds: Int64
    /// Each quantity's grid point, strictly increasing.
    let points: [Int]

    /// The grid of quantities starting at `starts` (ordered), in a series that starts at `start`.
    init(starts: [Date], from start: Date) {
        func micros(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }
        let origin = micros(start)
        let offsets = starts.map { max(micros($0) - origin, 0) }
        let steps = zip(offsets.dropFirst(), offsets).map { $0 - $1 }.filter { $0 > 0 }.sorted()
        var period = Double(steps.isEmpty ? 1_000_000 : steps[(steps.count - 1) / 2])
        // Least squares of the offsets over their grid positions, until the positions settle
        // (a few rounds: each moves the period toward the device's rate).
        var positions: [Double] = []
        for _ in 0..<4 {
            let next = offsets.map { (Double($0) / period).rounded() }
            let weight = next.reduce(0) { $0 + $1 * $1 }
            guard next != positions, weight > 0 else { break }
            positions = next
            period = zip(positions, offsets).reduce(0) { $0 + $1.0 * Double($1.1) } / weight
        }
        let span = Double(offsets.last ?? 0)
        period = max(period.rounded(), 1000, (span / Double(4 * max(offsets.count, 1))).rounded(.up))
        periodMicroseconds = Int64(period)
        var points: [Int] = []
        points.reserveCapacity(offsets.count)
        for offset in offsets {
            let nearest = Int((Double(offset) / period).rounded())
            points.append(max(nearest, (points.last ?? -1) + 1))
        }
        self.points = points
    }

    /// The period as SampledData writes it: milliseconds, a decimal.
    var periodMilliseconds: Double { Double(periodMicroseconds) / 1000 }

    /// SampledData's `data`: `values` (one per quantity, in order) at their grid points, `E`
    /// between them, separated by single spaces.
    func data(_ values: [Double]) -> String {
        var texts = Array(repeating: "E", count: (points.last ?? -1) + 1)
        for (point, value) in zip(points, values) { texts[point] = Self.decimal(value) }
        return texts.joined(separator: " ")
    }

    /// `value` as a FHIR decimal: a whole number without a fraction, else the shortest text that
    /// reads back as the same double.
    static func decimal(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
