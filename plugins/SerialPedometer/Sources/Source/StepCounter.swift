public import FoundationEssentials

/// What the gateway remembers about one device's counters between readings (and restarts).
public struct StepCounterState: Hashable, Sendable, Codable {
    /// The last step counter read.
    public var steps: UInt32
    /// The last cumulative distance read, in meters: the distance baseline. A reading without
    /// distance keeps it (distance is optional in HGP/1, and erasing the baseline would lose the
    /// distance walked until the next reading that has it).
    public var distanceMeters: Double?
    /// When that reading arrived (gateway clock).
    public var date: Date

    public init(steps: UInt32, distanceMeters: Double? = nil, date: Date) {
        self.steps = steps
        self.distanceMeters = distanceMeters
        self.date = date
    }
}

/// How a reading relates to the previous one.
public enum StepCounterEvent: String, Hashable, Sendable, Codable {
    /// No previous state: the reading only sets the baseline; nothing is counted.
    case baseline
    /// The counter went up (or stayed): the difference is counted.
    case counted
    /// The counter passed 4 294 967 295 and restarted at 0: the modular difference is counted.
    case wrapped
    /// The counter dropped: the device rebooted. Its new value (steps since the reboot) is counted.
    case reset
}

/// Steps (and distance) walked between two readings: the interval is exactly the time between
/// the readings, never spread or shortened.
public struct StepDelta: Hashable, Sendable {
    public var steps: UInt64
    /// Meters, when both readings carried a distance that can be differenced.
    public var distanceMeters: Double?
    public var start: Date
    public var end: Date
    /// The interval is longer than the gap threshold (the device or the gateway was away).
    public var spansGap: Bool
}

/// Turns cumulative counter readings into interval deltas. Pure and deterministic: the same
/// readings give the same deltas, which is what makes the rules table-testable.
///
/// Rules (see the README, "Counting"):
/// - First reading of a device without stored state: baseline only. Steps taken before the
///   gateway ever saw the device are not attributed to any interval.
/// - Increase: `new − old` over `[old date, new date]`.
/// - Decrease with a modular difference `(new − old) mod 2³²` of at most ``wrapTolerance``: a
///   wrap-around; the modular difference is counted.
/// - Any other decrease: a reboot. The new value is counted (the device counts from zero after
///   booting, so those steps were all taken inside the interval); steps between the last reading
///   and the reboot are unknowable and lost.
/// - A zero difference produces no delta but moves the baseline date forward, so the next
///   interval starts at the last time the count was known.
/// - Gaps: an interval longer than ``gapThreshold`` is still one delta over the true interval,
///   flagged ``StepDelta/spansGap``; steps are never smeared over the gap.
/// - A reading dated before the previous one (the wall clock stepped back) gets a zero-length
///   interval at its own date.
/// - Distance is optional: a reading without it keeps the distance baseline (after a reboot the
///   baseline becomes 0, as the device counts distance from zero too), so the next reading with
///   distance counts everything walked since the last one that had it.
public struct StepCounter: Hashable, Sendable {
    /// The largest modular difference read as a wrap-around rather than a reboot.
    public var wrapTolerance: UInt32
    /// Intervals longer than this are flagged as gaps.
    public var gapThreshold: TimeInterval

    public init(wrapTolerance: UInt32 = 100_000, gapThreshold: TimeInterval = 900) {
        self.wrapTolerance = wrapTolerance
        self.gapThreshold = gapThreshold
    }

    /// The result of one reading.
    public struct Advance: Hashable, Sendable {
        /// The state to store.
        public var state: StepCounterState
        public var event: StepCounterEvent
        /// What to publish; nil when nothing was walked (or for a baseline).
        public var delta: StepDelta?
    }

    /// Advances `previous` by `reading`, received at `date`.
    public func advance(
        from previous: StepCounterState?, steps: UInt32, distanceMeters: Double?, at date: Date
    ) -> Advance {
        guard let previous else {
            return Advance(
                state: StepCounterState(steps: steps, distanceMeters: distanceMeters, date: date), event: .baseline,
                delta: nil)
        }
        let event: StepCounterEvent
        let counted: UInt64
        if steps >= previous.steps {
            event = .counted
            counted = UInt64(steps - previous.steps)
        } else if steps &- previous.steps <= wrapTolerance {
            event = .wrapped
            counted = UInt64(steps &- previous.steps)
        } else {
            event = .reset
            counted = UInt64(steps)
        }
        var distance: Double?
        if let now = distanceMeters {
            if event == .reset {
                distance = now
            } else if let before = previous.distanceMeters, now >= before {
                distance = now - before
            }
        }
        let distanceBaseline = distanceMeters ?? (event == .reset ? previous.distanceMeters.map { _ in 0 } : previous.distanceMeters)
        let state = StepCounterState(steps: steps, distanceMeters: distanceBaseline, date: date)
        let start = min(previous.date, date)
        guard counted > 0 || (distance ?? 0) > 0 else {
            return Advance(state: state, event: event, delta: nil)
        }
        let delta = StepDelta(
            steps: counted, distanceMeters: distance, start: start, end: date,
            spansGap: date.timeIntervalSince(start) > gapThreshold)
        return Advance(state: state, event: event, delta: delta)
    }
}
