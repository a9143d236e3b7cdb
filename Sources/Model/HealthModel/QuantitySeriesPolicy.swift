/// When readings of one quantity type are kept as a quantity series (HealthKit's
/// HKQuantitySeriesSample) instead of one sample each, and when a series is closed.
///
/// A type has a policy when its readings arrive as a stream from one device, a second or less
/// apart (a strap's heart rate, a bike's power): a series holds them in a few bytes each, with no
/// uuid or index entry per reading. A type without one (a weighing, a blood pressure, a glucose
/// reading) is always a plain sample. The policy is part of the type's declaration
/// (``QuantityType/seriesPolicy``), so every writer folds the same types the same way.
///
/// A series is closed, and the next reading starts a new one, when the reading
/// - would make the series span more than ``maximumSpan`` from its first quantity's start,
/// - starts more than ``maximumGap`` after the series' last quantity ended (the device went
///   away and came back),
/// - would make it hold more than ``maximumCount`` quantities,
/// - or comes from another device, in another unit or with other metadata.
/// A series nothing was added to for ``maximumGap`` of the writer's monotonic time is closed too,
/// as is every series when the store closes.
public struct QuantitySeriesPolicy: Hashable, Sendable {
    /// The longest a series spans, from its first quantity's start to its last one's start.
    public var maximumSpan: Duration
    /// The longest pause between two quantities of one series.
    public var maximumGap: Duration
    /// The most quantities one series holds.
    public var maximumCount: Int

    public init(maximumSpan: Duration, maximumGap: Duration, maximumCount: Int) {
        self.maximumSpan = maximumSpan
        self.maximumGap = maximumGap
        self.maximumCount = maximumCount
    }

    /// The policy of the built-in stream types: a minute a series, as HealthKit's own series of
    /// a workout's heart rate are cut; a reading missing for 10 s means the device went away.
    public static let stream = QuantitySeriesPolicy(maximumSpan: .seconds(60), maximumGap: .seconds(10), maximumCount: 4096)
}
