public import FoundationEssentials

/// Each device's advertisements per second, over a sliding window: what `status` shows, and what
/// a profile's required rate is checked against.
///
/// A pure value: fed the arrival time of each advertisement, in order; no clock of its own.
/// Memory is bounded: at most ``capacity`` arrival times are kept per device.
public struct AdvertisementRateMeter: Sendable {
    /// The window the rate is measured over.
    public let window: TimeInterval
    /// The most arrival times kept per device (older ones are dropped; the rate saturates at
    /// `capacity / window`).
    public let capacity: Int
    private var arrivals: [String: [Date]] = [:]

    /// A meter over `window` seconds.
    public init(window: TimeInterval = 10, capacity: Int = 1024) {
        self.window = window
        self.capacity = capacity
    }

    /// Counts one advertisement of `device` at `date`.
    public mutating func record(_ device: String, at date: Date) {
        var times = arrivals[device, default: []]
        times.append(date)
        let start = date.addingTimeInterval(-window)
        if let first = times.firstIndex(where: { $0 > start }), first > 0 { times.removeFirst(first) }
        if times.count > capacity { times.removeFirst(times.count - capacity) }
        arrivals[device] = times
    }

    /// `device`'s advertisements per second over the window ending at `now`; nil before it
    /// was heard twice. The span is the window once the device has been heard for that long,
    /// else the time since its first advertisement in it.
    public func rate(of device: String, at now: Date) -> Double? {
        guard let times = arrivals[device] else { return nil }
        let start = now.addingTimeInterval(-window)
        let recent = times.filter { $0 > start }
        guard recent.count >= 2, let first = recent.first, let last = recent.last, last > first else { return nil }
        return Double(recent.count - 1) / last.timeIntervalSince(first)
    }

    /// The devices heard.
    public var devices: [String] { arrivals.keys.sorted() }

    /// Forgets `device`.
    public mutating func forget(_ device: String) { arrivals[device] = nil }
}

/// Whether a scan path gives a profile the rate it needs: what is reported, not silently
/// accepted, when it does not.
public enum RateVerdict: Sendable, Hashable {
    /// The measured rate is at least what the profile needs, or it needs none.
    case sufficient
    /// The measured rate is below what the profile needs.
    case insufficient(measured: Double, required: Double)
    /// Not heard often enough yet to say.
    case unknown

    /// The verdict for a device measured at `measured` advertisements per second, for a
    /// profile needing `required` (with 20 % of tolerance: advertising intervals jitter).
    public static func judge(measured: Double?, required: Double?) -> RateVerdict {
        guard let required else { return .sufficient }
        guard let measured else { return .unknown }
        return measured >= required * 0.8 ? .sufficient : .insufficient(measured: measured, required: required)
    }
}
