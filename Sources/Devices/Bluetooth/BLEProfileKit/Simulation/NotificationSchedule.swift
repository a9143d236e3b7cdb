import GatewayRuntime
public import FoundationEssentials

/// When a simulated device sends its notifications.
///
/// Each device keeps its own fixed schedule, as a real one ticks on its own crystal: the time
/// spent consuming a payload does not push the next one back. Started together, simulated
/// devices would all notify in the same instant, a burst no real fleet makes, so the schedule
/// starts at a fraction of the period that differs per device (the golden-ratio sequence spreads
/// any number of devices evenly; device 0 waits one whole period). Wake-ups land on a 10 ms grid
/// of the clock, as a controller hands over notifications at connection events rather than at
/// arbitrary instants, and devices due in the same 10 ms share one timer wake-up.
public struct NotificationSchedule: Sendable {
    /// The first notification's due time, in microseconds since 1970, before grid alignment.
    private let first: Int64
    private let period: Int64
    private static let gridMicroseconds: Int64 = 10_000

    /// The schedule of the device numbered `index` (from 0), subscribed at `start`.
    public init(device index: Int, period: Duration, start: Date) {
        let spread = (Double(index) * 0.618_033_988_749_895).truncatingRemainder(dividingBy: 1)
        self.period = Self.microseconds(period)
        first = Self.microseconds(start) + Self.microseconds(period * (1 - spread))
    }

    /// How long to wait at `now` for notification number `count` (from 0): zero when it is due.
    public func wait(for count: Int64, now: Date) -> Duration {
        let due = first + count * period
        let aligned = (due + Self.gridMicroseconds - 1) / Self.gridMicroseconds * Self.gridMicroseconds
        return .microseconds(max(0, aligned - Self.microseconds(now)))
    }

    private static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    private static func microseconds(_ duration: Duration) -> Int64 {
        Int64((duration.seconds * 1_000_000).rounded())
    }
}
