import FoundationEssentials

/// The length of a statistics bucket in calendar terms, as HealthKit's statistics collections
/// use `DateComponents`: a day bucket runs from one local midnight to the next, so the day a
/// daylight-saving change happens on is one bucket of 23 or 25 hours.
public struct CalendarInterval: Hashable, Sendable, CustomStringConvertible {
    /// The calendar unit a bucket counts in.
    public enum Unit: String, Hashable, Sendable, CaseIterable {
        case minute, hour, day, week, month
    }

    /// The unit.
    public var unit: Unit
    /// How many units one bucket spans; positive.
    public var count: Int

    /// `count` units of `unit`, e.g. `CalendarInterval(.day)` or `CalendarInterval(.minute, count: 15)`.
    public init(_ unit: Unit, count: Int = 1) {
        self.unit = unit
        self.count = count
    }

    public var description: String { count == 1 ? unit.rawValue : "\(count) \(unit.rawValue)s" }

    /// The start of bucket `index` counted from `anchor` (negative indices lie before it), or nil
    /// when the calendar cannot represent it. Every bucket is counted from the anchor, not from
    /// its neighbour, so a month bucket anchored on the 31st starts on the last day of a shorter month.
    func bucketStart(_ index: Int, anchor: Date, calendar: ZonedCalendar) -> Date? {
        let (component, scale): (Calendar.Component, Int) = switch unit {
        case .minute: (.minute, 1)
        case .hour: (.hour, 1)
        case .day: (.day, 1)
        case .week: (.day, 7)
        case .month: (.month, 1)
        }
        let (product, overflow) = index.multipliedReportingOverflow(by: count * scale)
        guard !overflow else { return nil }
        return calendar.date(byAdding: component, value: product, to: anchor)
    }

    /// A rough length of one bucket in seconds, to find the bucket holding a date without walking
    /// to it from the anchor one bucket at a time.
    var approximateSeconds: Double {
        let unitSeconds: Double = switch unit {
        case .minute: 60
        case .hour: 3600
        case .day: 86400
        case .week: 7 * 86400
        case .month: 30.436875 * 86400
        }
        return unitSeconds * Double(count)
    }
}
