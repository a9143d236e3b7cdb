public import FoundationEssentials

/// systemd's watchdog as the gateway serves it, for `healthgate status` (its `watchdog` object)
/// and `GET /metrics` (the `healthgate_watchdog_*` families). Present only while systemd watches
/// the gateway (`WatchdogSec=` in the unit).
public struct WatchdogReport: Sendable, Hashable, Codable {
    /// systemd's timeout (`WatchdogSec=`, `$WATCHDOG_USEC`) in seconds. The gateway checks its
    /// pipeline and pings every half of it, and withholds the pings once a writer call or a
    /// sink's queue has not moved for that half (``PipelineWatchdog``).
    public var timeoutSeconds: Double
    /// The last `WATCHDOG=1` sent; nil before the first.
    public var lastPing: Date?
    /// `WATCHDOG=1` notifications sent since the start.
    public var pings: Int
    /// The last check of the pipeline: it advances every half timeout whether or not a ping went.
    public var lastCheck: Date?
    /// Why pings are withheld now; nil while they are sent.
    public var withheld: String?
    /// When the pings were first withheld in this episode; nil while they are sent.
    public var withheldSince: Date?

    public init(
        timeoutSeconds: Double, lastPing: Date? = nil, pings: Int = 0, lastCheck: Date? = nil, withheld: String? = nil,
        withheldSince: Date? = nil
    ) {
        self.timeoutSeconds = timeoutSeconds
        self.lastPing = lastPing
        self.pings = pings
        self.lastCheck = lastCheck
        self.withheld = withheld
        self.withheldSince = withheldSince
    }

    /// A check that sent `WATCHDOG=1` at `date`.
    public mutating func recordPing(at date: Date) {
        lastPing = date
        pings += 1
        lastCheck = date
        withheld = nil
        withheldSince = nil
    }

    /// A check at `date` that withheld the ping for `reason`.
    public mutating func recordWithheld(_ reason: String, at date: Date) {
        lastCheck = date
        withheldSince = withheldSince ?? date
        withheld = reason
    }
}
