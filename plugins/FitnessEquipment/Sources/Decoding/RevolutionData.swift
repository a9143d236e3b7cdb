/// A cumulative revolution count and the event time of the last revolution, as sent.
public struct RevolutionData: Hashable, Sendable {
    /// Revolutions since the sensor started, modulo the counter's modulus.
    public var cumulativeRevolutions: UInt32
    /// The time of the last revolution in the counter's ticks (1/1024 or 1/2048 s), modulo 2^16.
    public var lastEventTime: UInt16
    /// How the values wrap and what a tick is.
    public var counter: RevolutionCounter

    /// Creates revolution data from raw values.
    public init(cumulativeRevolutions: UInt32, lastEventTime: UInt16, counter: RevolutionCounter) {
        self.cumulativeRevolutions = cumulativeRevolutions
        self.lastEventTime = lastEventTime
        self.counter = counter
    }

    /// The event time in seconds.
    public var lastEventTimeSeconds: Double { Double(lastEventTime) / counter.ticksPerSecond }
}
