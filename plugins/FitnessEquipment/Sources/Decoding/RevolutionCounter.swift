/// How a cumulative revolution counter and its event time wrap, and the event time's resolution.
///
/// The four counters of the cycling profiles differ: CSC's wheel counter is uint32 with event
/// times in 1/1024 s, Cycling Power's wheel counter is uint32 with event times in 1/2048 s (CPS
/// v1.1, Wheel Revolution Data), and both profiles' crank counters are uint16 with event times in 1/1024 s.
/// Every event time is a uint16, so it wraps after 64 s (1/1024) or 32 s (1/2048).
public struct RevolutionCounter: Hashable, Sendable {
    /// The counter's modulus: 2^32 for wheels, 2^16 for cranks.
    public var revolutionModulus: UInt64
    /// Event-time ticks per second: 1024 or 2048.
    public var ticksPerSecond: Double

    /// Creates a counter description.
    public init(revolutionModulus: UInt64, ticksPerSecond: Double) {
        self.revolutionModulus = revolutionModulus
        self.ticksPerSecond = ticksPerSecond
    }

    /// The event time's modulus, 2^16 ticks.
    public static let eventTimeModulus: UInt32 = 1 << 16

    /// Seconds after which the event time repeats: 64 s at 1/1024 s, 32 s at 1/2048 s.
    public var eventTimeWrapSeconds: Double { Double(Self.eventTimeModulus) / ticksPerSecond }

    /// CSC Measurement's wheel: uint32 revolutions, 1/1024 s.
    public static let cscWheel = RevolutionCounter(revolutionModulus: 1 << 32, ticksPerSecond: 1024)
    /// Cycling Power Measurement's wheel: uint32 revolutions, 1/2048 s.
    public static let cyclingPowerWheel = RevolutionCounter(revolutionModulus: 1 << 32, ticksPerSecond: 2048)
    /// The crank of either profile: uint16 revolutions, 1/1024 s.
    public static let crank = RevolutionCounter(revolutionModulus: 1 << 16, ticksPerSecond: 1024)
}
