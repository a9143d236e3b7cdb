extension StatisticsCalculator {
    /// One bucket's running values, of one device or of a type's series: the count, the sum,
    /// the extremes, and the most recent value with its start.
    struct Accumulator {
        var count = 0
        var sum = 0.0
        var minimum = Double.infinity
        var maximum = -Double.infinity
        var mostRecent = 0.0
        var mostRecentStart = Int64.min

        /// Adds a series' summary: `count` values summing to `sum`, the last `last` at `lastStart`.
        mutating func add(count: Int, sum: Double, minimum: Double, maximum: Double, last: Double, at lastStart: Int64) {
            self.count += count
            self.sum += sum
            self.minimum = min(self.minimum, minimum)
            self.maximum = max(self.maximum, maximum)
            if lastStart >= mostRecentStart {
                mostRecent = last
                mostRecentStart = lastStart
            }
        }

        /// Adds a value (for a discrete type, in start order; later samples win ties).
        mutating func add(_ value: Double, at start: Int64) {
            count += 1
            sum += value
            minimum = min(minimum, value)
            maximum = max(maximum, value)
            if start >= mostRecentStart {
                mostRecent = value
                mostRecentStart = start
            }
        }

        /// Adds a series' contribution: its summary, or one of its quantities.
        mutating func add(_ contribution: SeriesContribution) {
            switch contribution {
            case .summary(_, let count, let sum, let minimum, let maximum, let last, let lastStart):
                add(count: count, sum: sum, minimum: minimum, maximum: maximum, last: last, at: lastStart)
            case .quantity(let start, _, let value):
                add(value, at: start)
            }
        }
    }
}
