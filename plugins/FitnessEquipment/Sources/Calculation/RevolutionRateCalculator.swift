/// Turns consecutive readings of one cumulative revolution counter (a wheel or a crank) into
/// revolutions per second, across the rollovers of the counter and of its event time.
///
/// Rules, for each reading in arrival order with the time it was received (any monotonic clock,
/// in seconds; the calculator never reads a clock itself):
/// - **The first reading**, and the first after a discarded one, only sets the baseline
///   (``Outcome/baseline``).
/// - **Rollovers**: the revolution delta is taken modulo the counter's modulus (2^32 for wheels,
///   2^16 for cranks) and the event-time delta modulo 2^16 ticks, so a counter or a clock that
///   wraps between two readings yields the true small delta.
/// - **A repeated event time** means no revolution ended since the last reading: nothing new
///   (``Outcome/noNewEvent``). Once the event time has stood still for ``stopTimeout`` seconds of
///   arrival time, the wheel or crank is taken to have stopped, and ``Outcome/stopped`` is
///   reported once (a rate of zero); then nothing until it turns again. The default, 3 s, is the
///   time a 2.1 m wheel takes for one turn at 2.5 km/h, or a crank at 20 /min: slower than that
///   is standing.
/// - **A gap**: when the event time changes after more than half its wrap period (32 s at
///   1/1024 s, 16 s at 1/2048 s) of arrival time since it last changed, the event-time delta may
///   hide whole wraps (the previous event can predate its notification by up to the stop
///   timeout, hence the half), and after such a standstill an average over it would not be a
///   speed anyway: the reading becomes the new baseline (``Outcome/discarded``).
/// - **Implausible rates** (above ``maximumRate`` revolutions per second, as after a sensor
///   reset sends the counter backwards, which modulo arithmetic reads as a huge delta) are
///   discarded the same way, never reported.
/// - A changed count with a repeated event time contradicts the profile and is discarded too.
public struct RevolutionRateCalculator: Sendable {
    /// What one reading yields.
    public enum Outcome: Hashable, Sendable {
        /// The reading only set the baseline.
        case baseline
        /// Revolutions ended since the last event: `revolutions` in `seconds` of event time.
        case moving(revolutions: UInt64, seconds: Double)
        /// The event time did not change, within the stop timeout.
        case noNewEvent
        /// The event time stood still for the stop timeout: the rate is now zero. Reported once.
        case stopped
        /// The reading could not be compared with the previous one and is the new baseline.
        case discarded(DiscardReason)

        /// Revolutions per second: the measured rate, zero when stopped, else nil.
        public var revolutionsPerSecond: Double? {
            switch self {
            case .moving(let revolutions, let seconds): Double(revolutions) / seconds
            case .stopped: 0
            default: nil
            }
        }
    }

    /// Why a reading was not compared with the previous one.
    public enum DiscardReason: String, Hashable, Sendable {
        /// Too much arrival time passed since the last event for the event time to be unambiguous.
        case gapLongerThanEventTimeWrap
        /// The computed rate is above ``maximumRate``.
        case implausibleRate
        /// The count changed while the event time did not.
        case countChangedWithoutEvent
    }

    /// How the counter wraps.
    public let counter: RevolutionCounter
    /// Seconds of unchanged event time after which the rate is reported as zero.
    public let stopTimeout: Double
    /// The largest rate reported, in revolutions per second.
    public let maximumRate: Double

    private var last: RevolutionData?
    /// Arrival time of the reading whose event time is `last`'s (the last change).
    private var lastChangeReceivedAt = 0.0
    private var reportedStop = false

    /// Creates a calculator for one counter.
    /// - Parameters:
    ///   - stopTimeout: seconds; at least 0.
    ///   - maximumRate: revolutions per second; the default 40 is 4.3 times a 2.1 m wheel at
    ///     70 km/h (9.3 /s) and 10 times a 240 /min crank, so only counter jumps exceed it.
    public init(counter: RevolutionCounter, stopTimeout: Double = 3, maximumRate: Double = 40) {
        self.counter = counter
        self.stopTimeout = max(0, stopTimeout)
        self.maximumRate = maximumRate
    }

    /// Compares `reading` with the previous one.
    public mutating func update(_ reading: RevolutionData, receivedAt: Double) -> Outcome {
        guard let previous = last else {
            rebase(reading, receivedAt)
            return .baseline
        }
        if reading.lastEventTime != previous.lastEventTime,
            receivedAt - lastChangeReceivedAt >= counter.eventTimeWrapSeconds / 2
        {
            rebase(reading, receivedAt)
            return .discarded(.gapLongerThanEventTimeWrap)
        }
        let revolutions =
            (UInt64(reading.cumulativeRevolutions) &+ counter.revolutionModulus &- UInt64(previous.cumulativeRevolutions))
            % counter.revolutionModulus
        let ticks =
            (UInt32(reading.lastEventTime) &+ RevolutionCounter.eventTimeModulus &- UInt32(previous.lastEventTime))
            % RevolutionCounter.eventTimeModulus
        if ticks == 0 {
            guard revolutions == 0 else {
                rebase(reading, receivedAt)
                return .discarded(.countChangedWithoutEvent)
            }
            if !reportedStop, receivedAt - lastChangeReceivedAt >= stopTimeout {
                reportedStop = true
                return .stopped
            }
            return .noNewEvent
        }
        let seconds = Double(ticks) / counter.ticksPerSecond
        if Double(revolutions) / seconds > maximumRate {
            rebase(reading, receivedAt)
            return .discarded(.implausibleRate)
        }
        last = reading
        lastChangeReceivedAt = receivedAt
        reportedStop = false
        return .moving(revolutions: revolutions, seconds: seconds)
    }

    /// Forgets the baseline, as after a reconnect: the next reading is a baseline.
    public mutating func reset() {
        last = nil
        reportedStop = false
    }

    private mutating func rebase(_ reading: RevolutionData, _ receivedAt: Double) {
        last = reading
        lastChangeReceivedAt = receivedAt
        reportedStop = false
    }
}
