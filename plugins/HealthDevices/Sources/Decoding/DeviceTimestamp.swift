import HealthModel

/// A Date Time field (GATT Specification Supplement, Date Time 0x2A08): the device's local
/// wall-clock time, without a time zone. Year, month or day 0 means "not known".
public struct DeviceTimestamp: Hashable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hours: Int
    public var minutes: Int
    public var seconds: Int

    public init(year: Int, month: Int, day: Int, hours: Int, minutes: Int, seconds: Int) {
        self.year = year
        self.month = month
        self.day = day
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
    }

    /// Whether every field is known and in range (year 1582-9999, as the specification allows).
    public var isComplete: Bool {
        (1582...9999).contains(year) && (1...12).contains(month) && (1...31).contains(day)
            && (0...23).contains(hours) && (0...59).contains(minutes) && (0...59).contains(seconds)
    }

    /// The wall-clock time as seconds since 1970 read as if it were UTC (the device's clock
    /// offset to UTC turns it into a real instant).
    public var wallClockSeconds: Double {
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        return Double(days * 86_400 + hours * 3600 + minutes * 60 + seconds)
    }

    /// This time moved by `minutes` (a glucose record's Time Offset), with the calendar's carries.
    public func adding(minutes offset: Int) -> DeviceTimestamp {
        guard isComplete, offset != 0 else { return self }
        var days = Self.daysFromCivil(year: year, month: month, day: day)
        var minuteOfDay = hours * 60 + minutes + offset
        days += Int((Double(minuteOfDay) / 1440).rounded(.down))
        minuteOfDay -= Int((Double(minuteOfDay) / 1440).rounded(.down)) * 1440
        let (y, m, d) = Self.civil(fromDays: days)
        return DeviceTimestamp(year: y, month: m, day: d, hours: minuteOfDay / 60, minutes: minuteOfDay % 60, seconds: seconds)
    }

    /// RFC 3339 with the offset `-00:00` (RFC 3339 §4.3: the time is local and its offset to UTC
    /// is unknown), or nil when a field is not known.
    public var rfc3339: String? {
        guard isComplete else { return nil }
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let paddedYear = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(paddedYear)-\(two(month))-\(two(day))T\(two(hours)):\(two(minutes)):\(two(seconds))-00:00"
    }

    /// The days from 1970-01-01 to a date (``CivilDate``, in the fields' `Int`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        Int(CivilDate.days(year: Int64(year), month: Int64(month), day: Int64(day)))
    }

    /// The date `days` after 1970-01-01 (``CivilDate``, in the fields' `Int`).
    static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let date = CivilDate.date(ofDay: Int64(days))
        return (Int(date.year), Int(date.month), Int(date.day))
    }
}
