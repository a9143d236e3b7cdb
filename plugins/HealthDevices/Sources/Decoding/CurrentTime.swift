public import FoundationEssentials

/// The Current Time characteristic (0x2A2B) of the Current Time Service: an Exact Time 256, that
/// is a Date Time, the day of the week (1 Monday … 7 Sunday, 0 unknown), the fractions of the
/// second in 1/256 s and the adjust reason bits (bit 0 "manual time update", bit 1 "external
/// reference time update", bit 2 "change of time zone", bit 3 "change of DST"). Pure.
public enum CurrentTime {
    /// Adjust Reason bit 0: the time was set by hand, as a gateway setting the clock does.
    public static let manualTimeUpdate: UInt8 = 0x01

    /// The device's wall-clock time from a Current Time value; nil when the value is shorter
    /// than a Date Time.
    public static func timestamp(_ value: [UInt8]) -> DeviceTimestamp? {
        guard value.count >= 7 else { return nil }
        return DeviceTimestamp(
            year: Int(UInt16(value[0]) | UInt16(value[1]) << 8), month: Int(value[2]), day: Int(value[3]), hours: Int(value[4]),
            minutes: Int(value[5]), seconds: Int(value[6]))
    }

    /// The Current Time value that sets a clock to `date`'s UTC wall-clock time: Exact Time 256
    /// and the adjust reason.
    public static func value(setting date: Date, adjustReason: UInt8 = manualTimeUpdate) -> [UInt8] {
        let seconds = date.timeIntervalSince1970
        let whole = Int(seconds.rounded(.down))
        let days = Int((Double(whole) / 86_400).rounded(.down))
        let secondOfDay = whole - days * 86_400
        let (year, month, day) = DeviceTimestamp.civil(fromDays: days)
        // 1970-01-01 was a Thursday (4 in 1 Monday … 7 Sunday).
        let weekday = ((days % 7) + 7 + 3) % 7 + 1
        let fractions = min(255, Int(((seconds - Double(whole)) * 256).rounded(.down)))
        return [
            UInt8(year & 0xFF), UInt8(year >> 8), UInt8(month), UInt8(day), UInt8(secondOfDay / 3600),
            UInt8(secondOfDay % 3600 / 60), UInt8(secondOfDay % 60), UInt8(weekday), UInt8(fractions), adjustReason,
        ]
    }
}
