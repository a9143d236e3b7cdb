/// Whether the gateway's wall clock can be believed: a fact read from the kernel, or declared by
/// the configuration for a box with a real-time clock, never assumed.
public enum ClockState: Sendable, Hashable, CustomStringConvertible {
    /// A time synchronisation daemon disciplines the clock; the kernel admits at most this error
    /// (nil when only systemd-timesyncd's flag file says so).
    case synchronized(maximumErrorSeconds: Double?)
    /// Not synchronised since boot (or no longer): the clock may be 1970, or the time of the last
    /// shutdown.
    case unsynchronized
    /// The configuration says the clock is right (`clock.trusted`).
    case declaredTrusted

    /// Whether a time from this clock may be written into a device.
    public var isTrusted: Bool {
        if case .unsynchronized = self { false } else { true }
    }

    /// One line for `healthgate status` and the log.
    public var description: String {
        switch self {
        case .synchronized(let error?): String(cFormat: "synchronized (maximum error %.3f s)", error)
        case .synchronized(nil): "synchronized (systemd-timesyncd)"
        case .unsynchronized: "not synchronized"
        case .declaredTrusted: "trusted by the configuration (clock.trusted)"
        }
    }
}

/// Where the clock's state comes from: the kernel in the executable, a fixed state in tests.
/// Injected like the clock; cheap enough to ask at every decision that depends on it.
public protocol ClockTrust: Sendable {
    /// The state now.
    func state() -> ClockState
}

/// A clock trust that never changes: tests, and a configuration that declares the clock right.
public struct FixedClockTrust: ClockTrust {
    public let fixed: ClockState
    public init(_ state: ClockState) { fixed = state }
    public func state() -> ClockState { fixed }
}
