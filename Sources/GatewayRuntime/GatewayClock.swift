public import FoundationEssentials

/// The time source every component receives: wall-clock dates for samples, and sleeps for
/// timers. Tests inject a manual clock to make time deterministic.
public protocol GatewayClock: Sendable {
    /// The current wall-clock date.
    func now() -> Date
    /// Suspends for `duration`. Throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The real clock: `Date()` for dates, `ContinuousClock` for sleeping.
public struct SystemClock: GatewayClock {
    public init() {}
    public func now() -> Date { Date() }
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
