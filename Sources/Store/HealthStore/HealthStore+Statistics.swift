import AsyncPrimitives
public import FoundationEssentials
public import HealthModel
import SQLite

extension HealthStore {
    // MARK: Statistics

    /// Statistics of `type` over `[from, to)`, in the type's canonical unit.
    ///
    /// - Discrete types: `average` (arithmetic mean), `minimum`, `maximum` and `mostRecent` (the
    ///   sample with the latest start date) over the samples whose start date is in the interval.
    /// - Cumulative types: `sum`. A sample lying across an interval boundary is split in
    ///   proportion to time: it contributes `value × overlap / duration` to each interval it
    ///   overlaps (as HealthKit does), so splitting a range into buckets never changes the total.
    ///   A sample of zero duration counts wholly in the interval that contains its start.
    ///   `sampleCount` counts the samples that contributed.
    /// An interval without samples has `sampleCount == 0` and nil values.
    ///
    /// `options` picks the values computed (nil: every one of the type's aggregation style); a
    /// value not asked for is nil, and options of the other style are refused with
    /// `.invalidArgument`, as HealthKit refuses them. `filter` narrows the samples counted to one
    /// device and/or metadata entries.
    public func statistics(
        of type: QuantityType, from: Date, to: Date, options: StatisticsOptions? = nil, filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> QuantityStatistics {
        let start = StoreTime.microseconds(from)
        let end = StoreTime.microseconds(to)
        guard end > start else {
            throw StoreError(.invalidArgument, path: path, message: "the range must end after it starts")
        }
        let buckets = try await statistics(of: type, edges: [start, end], options: options, filter: filter)
        return buckets[0]
    }

    /// Statistics of `type` in consecutive intervals of length `interval`, aligned on `anchor`
    /// (bucket k is `[anchor + k·interval, anchor + (k+1)·interval)`), for every bucket that
    /// overlaps `[from, to)`. Buckets are whole: the first may start before `from` and the last
    /// may end after `to`, and they cover their whole interval. Empty buckets are reported, with
    /// `sampleCount == 0`. The values follow ``statistics(of:from:to:)``.
    ///
    /// Buckets are fixed lengths of time: a "day" is 86 400 s from the anchor, whatever the
    /// calendar or daylight-saving time says; calendar buckets are
    /// ``statisticsCollection(of:from:to:anchor:interval:timeZone:)``.
    /// - Throws: `.invalidArgument` when `interval` is not positive, the range is empty, or it
    ///   would give more than 1 000 000 buckets.
    public func statisticsCollection(
        of type: QuantityType, from: Date, to: Date, anchor: Date, interval: Duration,
        options: StatisticsOptions? = nil, filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> [QuantityStatistics] {
        let edges = try fixedEdges(from: from, to: to, anchor: anchor, interval: interval)
        return try await statistics(of: type, edges: edges, options: options, filter: filter)
    }

    /// The bucket edges, in µs, of the buckets of length `interval` from `anchor` that cover `[from, to)`.
    private func fixedEdges(from: Date, to: Date, anchor: Date, interval: Duration) throws(StoreError) -> [Int64] {
        let width = interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000
        guard width > 0 else {
            throw StoreError(.invalidArgument, path: path, message: "the interval must be positive, got \(interval)")
        }
        let start = StoreTime.microseconds(from)
        let end = StoreTime.microseconds(to)
        guard end > start else {
            throw StoreError(.invalidArgument, path: path, message: "the range must end after it starts")
        }
        let anchorMicros = StoreTime.microseconds(anchor)
        let offset = start - anchorMicros
        // Floor division, so that a range before the anchor aligns too.
        let firstIndex = offset >= 0 ? offset / width : -((-offset + width - 1) / width)
        let firstBucket = anchorMicros + firstIndex * width
        let count = (end - firstBucket + width - 1) / width
        guard count <= Int64(Self.maximumBuckets) else {
            throw StoreError(.invalidArgument, path: path, message: "the range would give \(count) buckets; use a longer interval")
        }
        return (0...count).map { firstBucket + $0 * width }
    }

    /// Statistics of `type` in calendar buckets of `interval` in `timeZone`, counted from
    /// `anchor` (bucket k starts at the anchor plus k intervals, in the calendar of the time
    /// zone), for every bucket that overlaps `[from, to)`, as HealthKit's statistics collections
    /// do. A day bucket runs from local midnight to local midnight (with a midnight anchor), so
    /// the day of a daylight-saving change is one bucket of 23 or 25 hours; months have their
    /// calendar lengths. Buckets are whole and empty ones are reported, as in
    /// ``statisticsCollection(of:from:to:anchor:interval:)``.
    /// - Throws: `.invalidArgument` when `interval.count` is not positive, the range is empty, or
    ///   it would give more than 1 000 000 buckets.
    public func statisticsCollection(
        of type: QuantityType, from: Date, to: Date, anchor: Date, interval: CalendarInterval, timeZone: any UTCOffsetRules,
        options: StatisticsOptions? = nil, filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> [QuantityStatistics] {
        let edges = try calendarEdges(from: from, to: to, anchor: anchor, interval: interval, timeZone: timeZone)
        return try await statistics(of: type, edges: edges, options: options, filter: filter)
    }

    /// The bucket edges, in µs, of the calendar buckets that cover `[from, to)`.
    private func calendarEdges(
        from: Date, to: Date, anchor: Date, interval: CalendarInterval, timeZone: any UTCOffsetRules
    ) throws(StoreError) -> [Int64] {
        guard interval.count > 0 else {
            throw StoreError(.invalidArgument, path: path, message: "the interval count must be positive, got \(interval.count)")
        }
        guard to > from else {
            throw StoreError(.invalidArgument, path: path, message: "the range must end after it starts")
        }
        let calendar = ZonedCalendar(zone: timeZone)
        let unrepresentable = StoreError(
            .invalidArgument, path: path, message: "the range is too far from the anchor for \(interval) buckets")
        func start(_ index: Int) throws(StoreError) -> Date {
            guard let date = interval.bucketStart(index, anchor: anchor, calendar: calendar) else { throw unrepresentable }
            return date
        }
        // Months vary by under 10 % around their average, so this refuses only ranges that are
        // surely too long, before the calendar walks them.
        guard to.timeIntervalSince(from) / interval.approximateSeconds <= Double(Self.maximumBuckets) * 1.1 else {
            throw StoreError(
                .invalidArgument, path: path,
                message: "the range would give more than \(Self.maximumBuckets) buckets; use a longer interval")
        }
        // An estimate from the average bucket length, corrected by the calendar.
        let estimate = (from.timeIntervalSince(anchor) / interval.approximateSeconds).rounded(.down)
        guard estimate.magnitude < 1e12 else { throw unrepresentable }
        var index = Int(estimate)
        while try start(index) > from { index -= 1 }
        while try start(index + 1) <= from { index += 1 }
        var edges = [StoreTime.microseconds(try start(index))]
        while let last = edges.last, last < StoreTime.microseconds(to) {
            guard edges.count <= Self.maximumBuckets else {
                throw StoreError(
                    .invalidArgument, path: path,
                    message: "the range would give more than \(Self.maximumBuckets) buckets; use a longer interval")
            }
            index += 1
            edges.append(StoreTime.microseconds(try start(index)))
        }
        return edges
    }

    /// The most buckets one statistics collection returns: bounds the memory a query can take.
    static let maximumBuckets = 1_000_000

    private func statistics(
        of type: QuantityType, edges: [Int64], options: StatisticsOptions?, filter: SampleFilter
    ) async throws(StoreError) -> [QuantityStatistics] {
        let options = options ?? .all(for: type.aggregationStyle)
        if let problem = options.problem(for: type) {
            throw StoreError(.invalidArgument, path: path, message: problem)
        }
        return try await read { connection throws(StoreError) in
            return switch type.aggregationStyle {
            case .discrete:
                try StatisticsCalculator.discrete(
                    connection, type: type, edges: edges, options: options, filter: filter, path: self.path)
            case .cumulative:
                try StatisticsCalculator.cumulative(connection, type: type, edges: edges, filter: filter, path: self.path)
            }
        }
    }

    // MARK: Statistics separated by device

    /// ``statistics(of:from:to:filter:)`` separated by device, as HealthKit's `separateBySource`
    /// option: the overall statistics (equal to the unseparated ones) and those of each device
    /// with samples in the range. A device is its name, manufacturer, model and local identifier
    /// (see ``DeviceStatistics/device``); a cumulative sample that crosses a bucket edge is split
    /// for its device as it is overall, so the devices' sums add up to the overall sum.
    public func statisticsByDevice(
        of type: QuantityType, from: Date, to: Date, filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> StatisticsByDevice {
        let start = StoreTime.microseconds(from)
        let end = StoreTime.microseconds(to)
        guard end > start else {
            throw StoreError(.invalidArgument, path: path, message: "the range must end after it starts")
        }
        return try await statisticsByDevice(of: type, edges: [start, end], filter: filter)[0]
    }

    /// ``statisticsCollection(of:from:to:anchor:interval:filter:)`` (fixed-length buckets)
    /// separated by device: per bucket, the overall statistics and each device's.
    public func statisticsCollectionByDevice(
        of type: QuantityType, from: Date, to: Date, anchor: Date, interval: Duration,
        filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> [StatisticsByDevice] {
        let edges = try fixedEdges(from: from, to: to, anchor: anchor, interval: interval)
        return try await statisticsByDevice(of: type, edges: edges, filter: filter)
    }

    /// ``statisticsCollection(of:from:to:anchor:interval:timeZone:filter:)`` (calendar buckets)
    /// separated by device: per bucket, the overall statistics and each device's.
    public func statisticsCollectionByDevice(
        of type: QuantityType, from: Date, to: Date, anchor: Date, interval: CalendarInterval, timeZone: any UTCOffsetRules,
        filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> [StatisticsByDevice] {
        let edges = try calendarEdges(from: from, to: to, anchor: anchor, interval: interval, timeZone: timeZone)
        return try await statisticsByDevice(of: type, edges: edges, filter: filter)
    }

    /// The overall statistics and each device's, in one read transaction so that both see the
    /// same samples.
    private func statisticsByDevice(
        of type: QuantityType, edges: [Int64], filter: SampleFilter
    ) async throws(StoreError) -> [StatisticsByDevice] {
        try await read { connection throws(StoreError) in
            let overall = switch type.aggregationStyle {
            case .discrete:
                try StatisticsCalculator.discrete(connection, type: type, edges: edges, filter: filter, path: self.path)
            case .cumulative:
                try StatisticsCalculator.cumulative(connection, type: type, edges: edges, filter: filter, path: self.path)
            }
            let devices = try StatisticsCalculator.byDevice(connection, type: type, edges: edges, filter: filter, path: self.path)
            return zip(overall, devices).map { StatisticsByDevice(overall: $0, devices: $1) }
        }
    }
}
