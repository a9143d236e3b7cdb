public import FoundationEssentials
public import HealthModel

/// Gregorian calendar arithmetic in a zone given by its offsets (a ``ZoneRules`` or a
/// `TimeZone`): days, weeks and months keep the local time of day, minutes and hours are
/// lengths of time, as with Foundation's `Calendar`.
///
/// It computes on local wall time (the instant plus its offset, read as UTC) and turns the
/// result back into an instant: a local time skipped by a change to daylight time moves forward
/// by the change, and one repeated by the change back is the earlier of the two instants.
public struct ZonedCalendar: Sendable {
    public let zone: any UTCOffsetRules
    private let utc: Calendar

    public init(zone: any UTCOffsetRules) {
        self.zone = zone
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(secondsFromGMT: 0) ?? utc.timeZone
        self.utc = utc
    }

    /// `date` moved by `value` units of `component` (.minute, .hour, .day, .month, .year).
    public func date(byAdding component: Calendar.Component, value: Int, to date: Date) -> Date? {
        switch component {
        case .second: return date.addingTimeInterval(Double(value))
        case .minute: return date.addingTimeInterval(Double(value) * 60)
        case .hour: return date.addingTimeInterval(Double(value) * 3600)
        default: return utc.date(byAdding: component, value: value, to: wall(date)).map(instant(forWall:))
        }
    }

    /// The start of the `component` (.minute … .month) that holds `date`, local.
    public func start(of component: Calendar.Component, containing date: Date) -> Date {
        // A minute or an hour starts at the offset of the date itself: in the hour repeated when
        // daylight time ends, each of the two hours has its own start.
        if component == .minute || component == .hour {
            let length = component == .minute ? 60.0 : 3600.0
            let offset = Double(zone.secondsFromGMT(for: date))
            return Date(timeIntervalSince1970: ((date.timeIntervalSince1970 + offset) / length).rounded(.down) * length - offset)
        }
        guard let start = utc.dateInterval(of: component, for: wall(date))?.start else { return date }
        return instant(forWall: start)
    }

    /// The local wall time of `date`, as the instant that shows it in UTC.
    func wall(_ date: Date) -> Date {
        date.addingTimeInterval(Double(zone.secondsFromGMT(for: date)))
    }

    /// The instant whose local wall time is `wall`.
    func instant(forWall wall: Date) -> Date {
        // The offsets a day and a half around: a zone changes at most once in that span.
        let before = zone.secondsFromGMT(for: wall.addingTimeInterval(-129_600))
        let after = zone.secondsFromGMT(for: wall.addingTimeInterval(129_600))
        let early = wall.addingTimeInterval(-Double(before))
        let late = wall.addingTimeInterval(-Double(after))
        let earlyValid = zone.secondsFromGMT(for: early) == before
        let lateValid = zone.secondsFromGMT(for: late) == after
        switch (earlyValid, lateValid) {
        case (true, true): return min(early, late)
        case (true, false): return early
        case (false, true): return late
        // Skipped: read with the offset before the change, it lies after the change.
        case (false, false): return early
        }
    }
}
