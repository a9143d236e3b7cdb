/// A POSIX TZ rule as a TZif footer holds it ("CET-1CEST,M3.5.0,M10.5.0/3", "<+03>-3"):
/// standard time, and optionally daylight time between two dates of each year (POSIX.1-2017
/// §8.3, with RFC 8536's extension of the time of day to −167…167 hours).
struct PosixTimeZoneRule: Hashable, Sendable {
    /// Offsets from UTC in seconds east of Greenwich (POSIX writes them west, with the sign flipped).
    let standardOffset: Int
    let daylight: Daylight?

    struct Daylight: Hashable, Sendable {
        let offset: Int
        let start: DateRule
        let end: DateRule
    }

    /// A day of the year and a local time of day.
    enum DateRule: Hashable, Sendable {
        /// `Jn`: day 1…365, February 29 never counted.
        case julianNoLeap(Int, time: Int)
        /// `n`: day 0…365, February 29 counted.
        case zeroBased(Int, time: Int)
        /// `Mm.w.d`: day `d` (0 Sunday) of week `w` (5 the last) of month `m`.
        case monthWeekDay(month: Int, week: Int, weekday: Int, time: Int)
    }

    init?(_ text: String) {
        var scanner = Scanner(Array(text.utf8))
        guard scanner.name(), let standard = scanner.offset() else { return nil }
        standardOffset = -standard
        if scanner.atEnd {
            daylight = nil
            return
        }
        guard scanner.name() else { return nil }
        var daylightOffset = standardOffset + 3600
        if let offset = scanner.offset() { daylightOffset = -offset }
        // Without dates, POSIX leaves them to the implementation; glibc takes the US rule.
        var start = DateRule.monthWeekDay(month: 3, week: 2, weekday: 0, time: 7200)
        var end = DateRule.monthWeekDay(month: 11, week: 1, weekday: 0, time: 7200)
        if scanner.consume(UInt8(ascii: ",")) {
            guard let first = scanner.dateRule(), scanner.consume(UInt8(ascii: ",")), let second = scanner.dateRule() else {
                return nil
            }
            start = first
            end = second
        }
        guard scanner.atEnd else { return nil }
        daylight = Daylight(offset: daylightOffset, start: start, end: end)
    }

    /// The offset in effect at `seconds` since 1970 UTC.
    func offset(at seconds: Int64) -> Int {
        guard let daylight else { return standardOffset }
        let year = CivilDate.year(ofDay: Self.floorDivide(seconds + Int64(standardOffset), 86_400))
        // A change's local time is read on the clock in effect before it.
        let start = daylight.start.seconds(in: year) - Int64(standardOffset)
        let end = daylight.end.seconds(in: year) - Int64(daylight.offset)
        let inDaylight = start < end ? (start <= seconds && seconds < end) : !(end <= seconds && seconds < start)
        return inDaylight ? daylight.offset : standardOffset
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index >= bytes.count }
        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        /// A zone abbreviation: three or more letters, or anything but '>' between '<' and '>'.
        mutating func name() -> Bool {
            if consume(UInt8(ascii: "<")) {
                let start = index
                while let byte = current, byte != UInt8(ascii: ">") { index += 1 }
                return index - start >= 3 && consume(UInt8(ascii: ">"))
            }
            let start = index
            while let byte = current, isLetter(byte) {
                index += 1
            }
            return index - start >= 3
        }

        private func isLetter(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        }

        mutating func number(maximumDigits: Int) -> Int? {
            var value = 0, digits = 0
            while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), digits < maximumDigits {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                index += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }

        /// `[+-]hh[:mm[:ss]]` in seconds, as written (positive west of Greenwich for an offset).
        mutating func offset(hourLimit: Int = 24) -> Int? {
            var sign = 1
            if consume(UInt8(ascii: "-")) { sign = -1 } else { _ = consume(UInt8(ascii: "+")) }
            guard let hours = number(maximumDigits: 3), hours <= hourLimit else { return nil }
            var seconds = hours * 3600
            if consume(UInt8(ascii: ":")) {
                guard let minutes = number(maximumDigits: 2), minutes < 60 else { return nil }
                seconds += minutes * 60
                if consume(UInt8(ascii: ":")) {
                    guard let secondsPart = number(maximumDigits: 2), secondsPart < 60 else { return nil }
                    seconds += secondsPart
                }
            }
            return sign * seconds
        }

        mutating func dateRule() -> DateRule? {
            let rule: DateRule
            if consume(UInt8(ascii: "M")) {
                guard let month = number(maximumDigits: 2), (1...12).contains(month), consume(UInt8(ascii: ".")),
                    let week = number(maximumDigits: 1), (1...5).contains(week), consume(UInt8(ascii: ".")),
                    let weekday = number(maximumDigits: 1), weekday <= 6
                else { return nil }
                rule = .monthWeekDay(month: month, week: week, weekday: weekday, time: 7200)
            } else if consume(UInt8(ascii: "J")) {
                guard let day = number(maximumDigits: 3), (1...365).contains(day) else { return nil }
                rule = .julianNoLeap(day, time: 7200)
            } else {
                guard let day = number(maximumDigits: 3), day <= 365 else { return nil }
                rule = .zeroBased(day, time: 7200)
            }
            guard consume(UInt8(ascii: "/")) else { return rule }
            guard let time = offset(hourLimit: 167) else { return nil }
            return switch rule {
            case .julianNoLeap(let day, _): .julianNoLeap(day, time: time)
            case .zeroBased(let day, _): .zeroBased(day, time: time)
            case .monthWeekDay(let month, let week, let weekday, _):
                .monthWeekDay(month: month, week: week, weekday: weekday, time: time)
            }
        }
    }
}

extension PosixTimeZoneRule.DateRule {
    /// The rule's local date and time in `year`, in seconds since 1970-01-01T00:00 local.
    func seconds(in year: Int64) -> Int64 {
        let day: Int64
        let time: Int
        switch self {
        case .julianNoLeap(let n, let t):
            // Day n counts March 1 as day 60 in every year.
            day = CivilDate.days(year: year, month: 1, day: 1) + Int64(n - 1)
                + (CivilDate.isLeap(year) && n >= 60 ? 1 : 0)
            time = t
        case .zeroBased(let n, let t):
            day = CivilDate.days(year: year, month: 1, day: 1) + Int64(n)
            time = t
        case .monthWeekDay(let month, let week, let weekday, let t):
            let first = CivilDate.days(year: year, month: Int64(month), day: 1)
            // 1970-01-01 was a Thursday (4).
            let firstWeekday = Int(((first + 4) % 7 + 7) % 7)
            var candidate = first + Int64((weekday - firstWeekday + 7) % 7) + Int64(7 * (week - 1))
            let length = CivilDate.days(year: month == 12 ? year + 1 : year, month: month == 12 ? 1 : Int64(month + 1), day: 1) - first
            while candidate - first >= length { candidate -= 7 }
            day = candidate
            time = t
        }
        return day * 86_400 + Int64(time)
    }
}
