public import FoundationEssentials

/// Turns RSC Measurements into running samples. Pure: dates come in with the payloads.
///
/// Speed and stride length are reported per notification. Distance comes from the Total Distance
/// counter: the delta between notifications, computed modulo 2³² so a wrapped counter still
/// gives the right delta; a delta larger than any runner could cover (more than 15 m/s over the
/// elapsed time, plus 50 m) is a counter reset and re-baselines instead. Steps are ESTIMATED from
/// cadence × elapsed time (elapsed time capped at 5 s per notification, so a stalled link does
/// not invent steps). Distance and steps are published per window of `windowSeconds`.
public struct RunningAggregator: Sendable {
    /// What one notification yields.
    public struct Output: Hashable, Sendable {
        /// Instantaneous speed, m/s.
        public var speed: Double
        /// Stride length in metres, when the pod sends it.
        public var strideLength: Double?
        /// A finished window: metres covered and estimated whole steps over [start, end].
        public var window: Window?
        /// The distance counter jumped (reset); the delta was not used.
        public var counterReset: Bool
    }

    /// Cumulative amounts over an interval.
    public struct Window: Hashable, Sendable {
        /// The window's start.
        public var start: Date
        /// The window's end.
        public var end: Date
        /// Metres covered, from the Total Distance counter.
        public var distance: Double
        /// Whole steps estimated from cadence; the fraction carries over.
        public var steps: Int
    }

    /// The length of a cumulative window.
    public let windowSeconds: Double
    private var windowStart: Date?
    private var lastDate: Date?
    private var lastCadence = 0
    private var lastDistance: UInt32?
    private var distance = 0.0
    private var steps = 0.0

    /// An aggregator with windows of `windowSeconds` (at least 1).
    public init(windowSeconds: Double) {
        self.windowSeconds = max(1, windowSeconds)
    }

    /// The gateway's wall clock stepped by `seconds`: the window and the last reception move with it.
    public mutating func clockStepped(by seconds: Double) {
        windowStart = windowStart?.addingTimeInterval(seconds)
        lastDate = lastDate?.addingTimeInterval(seconds)
    }

    /// Adds one measurement received at `date`.
    public mutating func add(_ measurement: RSCMeasurement, at date: Date) -> Output {
        var reset = false
        if let previous = lastDate {
            let elapsed = max(0, date.timeIntervalSince(previous))
            steps += Double(lastCadence) * min(elapsed, 5) / 60
            if let current = measurement.totalDistanceRaw, let before = lastDistance {
                let delta = Double(current &- before) / 10
                if delta <= 15 * elapsed + 50 {
                    distance += delta
                } else {
                    reset = true
                }
            }
        }
        if windowStart == nil { windowStart = date }
        lastDate = date
        lastCadence = measurement.instantaneousCadence
        if let current = measurement.totalDistanceRaw { lastDistance = current }
        var window: Window?
        if let start = windowStart, date.timeIntervalSince(start) >= windowSeconds {
            window = cut(until: date)
        }
        return Output(
            speed: measurement.instantaneousSpeed, strideLength: measurement.strideLength, window: window,
            counterReset: reset)
    }

    /// Ends the segment: returns the pending window and forgets the baselines (the next
    /// connection starts a new one; distance covered while disconnected is not attributed).
    public mutating func finishSegment() -> Window? {
        let window = lastDate.flatMap { cut(until: $0) }
        windowStart = nil
        lastDate = nil
        lastDistance = nil
        lastCadence = 0
        return window
    }

    private mutating func cut(until end: Date) -> Window? {
        guard let start = windowStart else { return nil }
        let whole = steps.rounded(.down)
        let window = Window(start: start, end: max(start, end), distance: distance, steps: Int(whole))
        steps -= whole
        distance = 0
        windowStart = end
        return window.distance > 0 || window.steps > 0 ? window : nil
    }
}
