public import FoundationEssentials

/// An interval during which a workout was running (not paused). `end` is nil while it runs.
public struct RunningInterval: Hashable, Sendable, Codable {
    /// When running began (start or resume).
    public var start: Date
    /// When it stopped (pause, stop, end); nil while running.
    public var end: Date?

    /// Creates an interval.
    public init(start: Date, end: Date? = nil) {
        self.start = start
        self.end = end
    }
}

/// The running intervals of a workout, and the mapping from wall-clock time to running time.
///
/// Running time ("active seconds") is what a stopwatch with a pause button shows: it stands still
/// during pauses. Gaps and zone times are measured in running time, so a pause never turns into
/// a gap.
public struct RunningTimeline: Hashable, Sendable {
    /// The running intervals in time order.
    public var intervals: [RunningInterval]

    /// Creates a timeline from intervals in time order.
    public init(_ intervals: [RunningInterval]) {
        self.intervals = intervals
    }

    /// Rebuilds the running intervals of a finished workout from its pause and resume events.
    public init(workout: Workout) {
        var intervals: [RunningInterval] = []
        var current: Date? = workout.startDate
        for event in workout.events.sorted(by: { $0.startDate < $1.startDate }) {
            switch event.type {
            case .pause:
                if let start = current {
                    intervals.append(RunningInterval(start: start, end: event.startDate))
                    current = nil
                }
            case .resume:
                if current == nil { current = event.startDate }
            case .lap, .marker, .segment: break
            }
        }
        if let start = current { intervals.append(RunningInterval(start: start, end: workout.endDate)) }
        self.intervals = intervals
    }

    /// Whether `date` lies in a running interval (both ends inclusive; an open interval runs on).
    public func contains(_ date: Date) -> Bool {
        intervals.contains { date >= $0.start && ($0.end.map { date <= $0 } ?? true) }
    }

    /// Whether `[start, end]` shares at least one instant with a running interval (both ends
    /// inclusive; an open interval runs on). How heartbeat series are matched: a series being
    /// recorded when the workout paused or ended still belongs to it.
    public func overlaps(start: Date, end: Date) -> Bool {
        intervals.contains { start <= ($0.end ?? .distantFuture) && end >= $0.start }
    }

    /// Running seconds from the first start up to `date`.
    public func activeSeconds(until date: Date) -> Double {
        var total = 0.0
        for interval in intervals where interval.start < date {
            let end = min(interval.end ?? date, date)
            total += max(0, end.timeIntervalSince(interval.start))
        }
        return total
    }

    /// Running seconds between two dates (zero if `to` precedes `from`).
    public func activeSeconds(from: Date, to: Date) -> Double {
        max(0, activeSeconds(until: to) - activeSeconds(until: from))
    }

    /// The pauses between consecutive running intervals (a pause still open is not listed).
    public var pauses: [(start: Date, end: Date)] {
        zip(intervals, intervals.dropFirst()).compactMap { interval, next in
            guard let end = interval.end, end < next.start else { return nil }
            return (end, next.start)
        }
    }
}
