import FoundationEssentials
import HealthStore

/// `query stats --interval`: a calendar unit (month … minute) or a fixed length of time.
enum StatisticsInterval: Sendable {
    case calendar(CalendarInterval)
    case fixed(Duration)

    /// The anchor when none is given: the start of the calendar unit that holds `start` (for a
    /// week, or a fixed length, the start of its day), so buckets fall on local boundaries.
    func defaultAnchor(for start: Date, calendar: ZonedCalendar) -> Date {
        let component: Calendar.Component = switch self {
        case .calendar(let interval):
            switch interval.unit {
            case .minute: .minute
            case .hour: .hour
            case .day, .week: .day
            case .month: .month
            }
        case .fixed: .day
        }
        return calendar.start(of: component, containing: start)
    }
}
