public import HealthModel
import GatewayRuntime
import Synchronization

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
    /// The base the wall clock's dates sit on now (see ``ClockBase``): it changes when, and only
    /// when, the wall clock steps.
    func clockBase() -> ClockBase
}

/// A clock trust whose state never changes: tests, and a configuration that declares the clock
/// right (whose clock can still be stepped by hand: its base comes from a reader).
public struct FixedClockTrust: ClockTrust {
    public let fixed: ClockState
    private let base: @Sendable () -> ClockBase

    /// A state and a base that never change.
    public init(_ state: ClockState, base: ClockBase = ClockBase(bootID: "fixed", wallMinusBootMilliseconds: 0)) {
        fixed = state
        self.base = { base }
    }

    /// A state that never changes, on the base `reader` reads.
    public init(_ state: ClockState, reader: ClockBaseReader) {
        fixed = state
        base = { reader.current() }
    }

    public func state() -> ClockState { fixed }
    public func clockBase() -> ClockBase { base() }
}

/// Reads a ``ClockBase`` from a boot id and a reading of wall − boot time, holding it steady
/// between steps: the two clocks are read one after the other and an NTP daemon slews the wall
/// clock, so consecutive readings differ by microseconds; the base moves only when a reading is
/// more than ``stepMilliseconds`` away from it, so the records of one stretch between steps all
/// carry the same base (and share one metadata set in the store).
public final class ClockBaseReader: Sendable {
    /// Smaller changes are the kernel slewing the clock, not a step.
    public static let stepMilliseconds: Int64 = 500
    public let bootID: String
    private let wallMinusBootSeconds: @Sendable () -> Double
    private let last = Mutex<Int64?>(nil)

    public init(bootID: String, wallMinusBootSeconds: @escaping @Sendable () -> Double) {
        self.bootID = bootID
        self.wallMinusBootSeconds = wallMinusBootSeconds
    }

    /// The base now.
    public func current() -> ClockBase {
        let reading = Int64((wallMinusBootSeconds() * 1000).rounded())
        let base = last.withLock { last -> Int64 in
            if let held = last, abs(reading - held) <= Self.stepMilliseconds { return held }
            last = reading
            return reading
        }
        return ClockBase(bootID: bootID, wallMinusBootMilliseconds: base)
    }
}
