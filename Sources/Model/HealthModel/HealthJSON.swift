public import FoundationEssentials

/// The one JSON representation of the model, used by every sink and by the CLI.
///
/// Dates are RFC 3339 strings in UTC with microseconds (`2026-11-22T03:57:01.123456Z`), so a
/// round trip through JSON keeps SQLite's microsecond precision. Keys are sorted so that equal
/// values encode to equal bytes (the HTTP sink's idempotency key relies on it).
public enum HealthJSON {
    /// A new encoder configured for the representation. Encoders are not Sendable; make one per
    /// task.
    public static func makeEncoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            // Refuse, with the field's path, a date RFC 3339 cannot write (a garbage device
            // timestamp), instead of writing a clamped one.
            guard RFC3339.isRepresentable(date) else {
                throw EncodingError.invalidValue(
                    date, EncodingError.Context(
                        codingPath: encoder.codingPath,
                        debugDescription: "date \(date.timeIntervalSince1970) s since 1970 is outside "
                            + "the years 0001-9999 that RFC 3339 can write"))
            }
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.string(from: date))
        }
        encoder.nonConformingFloatEncodingStrategy = .throw
        return encoder
    }

    /// A new decoder for the representation. Accepts RFC 3339 dates with or without fractional
    /// seconds and with any UTC offset.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = RFC3339.date(from: text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "not an RFC 3339 date: \(text)")
            }
            return date
        }
        return decoder
    }
}

/// RFC 3339 timestamps without Foundation's formatters (which are slow and not Sendable).
public enum RFC3339 {
    /// The first and last instants RFC 3339's four-digit years can write, in microseconds since
    /// 1970: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z.
    static let firstMicros: Int64 = -62_135_596_800_000_000
    static let lastMicros: Int64 = 253_402_300_799_999_999

    /// Whether `date`, rounded to the microsecond, lies in the years 0001-9999 and so has an
    /// RFC 3339 form.
    public static func isRepresentable(_ date: Date) -> Bool {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        // Double(lastMicros) rounds up to 10000-01-01T00:00:00Z exactly, hence `<`.
        return micros >= Double(firstMicros) && micros < Double(lastMicros)
    }

    /// `YYYY-MM-DDTHH:MM:SS.ffffffZ` in UTC, rounded to the microsecond.
    ///
    /// A date outside ``isRepresentable(_:)`` (or NaN) is clamped to the nearest bound, so this
    /// never traps; ``HealthJSON`` refuses such dates instead.
    public static func string(from date: Date) -> String {
        String(unsafeUninitializedCapacity: length) { buffer in
            write(date, to: buffer.baseAddress!)
            return length
        }
    }

    /// The length of every timestamp ``string(from:)`` writes.
    public static let length = 27

    /// Appends ``string(from:)``'s bytes to `out`, without making a `String`: the remote sinks'
    /// JSON writer formats one or two dates per sample, on the path every record a remote sink
    /// sends takes, and building the text from `String` pieces allocates for each piece.
    public static func append(_ date: Date, to out: inout [UInt8]) {
        // Written on the stack, then copied in one append (memcpy).
        var scratch: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { buffer in
            write(date, to: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
        }
    }

    /// Writes the 27 bytes at `target`, from integers only (the civil date from the day number,
    /// two digits at a time).
    private static func write(_ date: Date, to target: UnsafeMutablePointer<UInt8>) {
        // Clamp before converting: Int64(_:) traps on NaN and on values beyond ±9.2e18, which a
        // date from a garbage timestamp reaches (1e20 s since 1970 crashed the encoder).
        let raw = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let micros: Int64 =
            if raw.isNaN || raw <= Double(firstMicros) { firstMicros }
            else if raw >= Double(lastMicros) { lastMicros }
            else { Int64(raw) }
        var seconds = micros / 1_000_000
        var fraction = micros % 1_000_000
        if fraction < 0 {
            fraction += 1_000_000
            seconds -= 1
        }
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = Int(seconds - days * 86400)
        let (year, month, day) = CivilDate.date(ofDay: days)
        func two(_ value: Int, at index: Int) {
            let (tens, ones) = value.quotientAndRemainder(dividingBy: 10)
            target[index] = UInt8(truncatingIfNeeded: 48 + tens)
            target[index + 1] = UInt8(truncatingIfNeeded: 48 + ones)
        }
        let (century, yearOfCentury) = Int(year).quotientAndRemainder(dividingBy: 100)
        two(century, at: 0)
        two(yearOfCentury, at: 2)
        target[4] = UInt8(ascii: "-")
        two(Int(month), at: 5)
        target[7] = UInt8(ascii: "-")
        two(Int(day), at: 8)
        target[10] = UInt8(ascii: "T")
        two(secondOfDay / 3600, at: 11)
        target[13] = UInt8(ascii: ":")
        two(secondOfDay / 60 % 60, at: 14)
        target[16] = UInt8(ascii: ":")
        two(secondOfDay % 60, at: 17)
        target[19] = UInt8(ascii: ".")
        let (high, low) = Int(fraction).quotientAndRemainder(dividingBy: 10_000)
        two(high, at: 20)
        two(low / 100, at: 22)
        two(low % 100, at: 24)
        target[26] = UInt8(ascii: "Z")
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; also accepts a space or lower-case `t`
    /// between date and time. Returns nil for anything else.
    public static func date(from text: String) -> Date? {
        let b = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= b.count else { return nil }
            var value: Int64 = 0
            for i in range {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                value = value * 10 + Int64(b[i] - 48)
            }
            return value
        }
        guard b.count >= 19, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(b[10]),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < b.count, b[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < b.count, b[index] >= 48, b[index] <= 57 {
                fraction += Double(b[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < b.count else { return nil }
        var offset: Int64 = 0
        switch b[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == b.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            // RFC 3339 §5.6: time-numoffset is ("+" / "-") time-hour ":" time-minute, so the hour
            // is 00-23 and the minute 00-59.
            guard index + 6 == b.count, b[index + 3] == UInt8(ascii: ":"),
                let hours = number(index + 1..<index + 3), let minutes = number(index + 4..<index + 6),
                hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (b[index] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return nil
        }
        let days = CivilDate.days(year: year, month: month, day: day)
        let seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset
        // Round to the microsecond so that string(from:) and date(from:) are exact inverses.
        let micros = (Double(seconds) * 1_000_000 + (fraction * 1_000_000).rounded())
        return Date(timeIntervalSince1970: micros / 1_000_000)
    }

    /// The number of days in `month` of `year` (proleptic Gregorian), so that `2027-02-29` or
    /// `2027-04-31` is rejected instead of silently rolling into the next month (RFC 3339 §5.7).
    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
