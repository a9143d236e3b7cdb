public import FoundationEssentials
import Glibc

/// The time source every component receives: wall-clock dates for samples, and sleeps for
/// timers. Tests inject a manual clock to make time deterministic.
public protocol GatewayClock: Sendable {
    /// The current wall-clock date: for dates people and records see. It steps when the wall
    /// clock is set (see ``ClockTrust``), so no duration is measured on it.
    func now() -> Date
    /// Time on a monotonic clock since an origin of the clock's own (the kernel's CLOCK_BOOTTIME
    /// for the real clock): durations, timeouts and staleness are measured on it. A step of the
    /// wall clock leaves it alone; only differences of two readings of one clock mean anything.
    func uptime() -> Duration
    /// Suspends for `duration`. Throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The real clock: `Date()` for dates, CLOCK_BOOTTIME for durations, `ContinuousClock` for
/// sleeping.
public struct SystemClock: GatewayClock {
    public init() {}
    public func now() -> Date { Date() }
    public func uptime() -> Duration {
        var time = timespec()
        // CLOCK_BOOTTIME cannot fail with a valid pointer (clock_gettime(2): EINVAL only for an
        // unknown clock, EFAULT for a bad pointer).
        clock_gettime(CLOCK_BOOTTIME, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
    public func sleep(for duration: Duration) async throws {
        try await ContinuousClock().sleep(for: duration)
    }
}

extension Duration {
    /// The duration in seconds as a Double.
    public var seconds: Double {
        let (whole, attos) = components
        return Double(whole) + Double(attos) / 1e18
    }
}
