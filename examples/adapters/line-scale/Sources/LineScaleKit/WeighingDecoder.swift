/// Decodes one line of the scale: `<RFC 3339 date> <header>,<kind>,<sign><weight><unit>`
/// (README.md, "The line format").
///
/// Pure: bytes in, a ``Weighing`` or a ``WeighingLineError`` out; no I/O, no clock. White space
/// around the line (a CRLF's CR, padding) is ignored.
public enum WeighingDecoder {
    /// The most digits a date's fraction of a second may have (nanoseconds), which keeps a
    /// reading's id `<serial>/<date>` within the protocol's 256 characters.
    public static let maxFractionDigits = 9
    /// The most characters of a weight's number, sign and unit left out (`0072.45`).
    public static let maxNumberLength = 12

    /// Decodes `line`, one line of the scale without its `\n`.
    /// - Throws: ``WeighingLineError``: ``WeighingLineError/Code/overload`` for an `OL` line,
    ///   ``WeighingLineError/Code/blank`` for a blank one, another code for a line that is no
    ///   weighing. An `US` line is a weighing, ``Weighing/Stability/unstable``.
    public static func decode(_ line: some Collection<UInt8>) throws(WeighingLineError) -> Weighing {
        let text = trimmed(Array(line))
        let failure = { (code: WeighingLineError.Code) in WeighingLineError(code, line: printable(text)) }
        guard !text.isEmpty else { throw failure(.blank) }
        guard text.allSatisfy({ (0x20...0x7E).contains($0) || $0 == ASCII.tab }) else { throw failure(.notText) }

        guard let space = text.firstIndex(where: isSpace) else { throw failure(.notThreeFields) }
        let date = text[..<space]
        let fields = text[space...].drop(while: isSpace).split(separator: ASCII.comma, omittingEmptySubsequences: false)
        guard fields.count == 3 else { throw failure(.notThreeFields) }
        guard isRFC3339(date) else { throw failure(.badDate) }

        let stability: Weighing.Stability
        switch ascii(fields[0]) {
        case Weighing.Stability.stable.rawValue: stability = .stable
        case Weighing.Stability.unstable.rawValue: stability = .unstable
        // Checked before the kind and the weight: an overload line's weight is often no number.
        case "OL": throw failure(.overload)
        default: throw failure(.unknownHeader)
        }
        guard let kind = Weighing.Kind(rawValue: ascii(fields[1])) else { throw failure(.unknownKind) }

        let weight = fields[2]
        guard let sign = weight.first, sign == ASCII.plus || sign == ASCII.minus else { throw failure(.badWeight) }
        let number = weight.dropFirst().prefix { isDigit($0) || $0 == ASCII.dot }
        guard number.contains(where: isDigit), number.count(where: { $0 == ASCII.dot }) <= 1, number.count <= maxNumberLength,
            let magnitude = Double(ascii(number))
        else { throw failure(.badWeight) }
        // A&D-style scales pad the unit to three characters (` kg`): spaces before it are allowed.
        guard let unit = Weighing.Unit(rawValue: ascii(weight[number.endIndex...].drop(while: isSpace))) else {
            throw failure(.unknownUnit)
        }
        // `-0000.00` is 0, not -0.
        let value = sign == ASCII.minus && magnitude != 0 ? -magnitude : magnitude
        return Weighing(date: ascii(date), stability: stability, kind: kind, value: value, unit: unit)
    }

    /// `bytes` as a string a log line can hold: printable ASCII as it is, a quote, a backslash and
    /// any other byte escaped (`\"`, `\\`, `\t`, `\r`, `\xHH`).
    public static func printable(_ bytes: some Collection<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            switch byte {
            case ASCII.quote: text += "\\\""
            case ASCII.backslash: text += "\\\\"
            case ASCII.tab: text += "\\t"
            case ASCII.carriageReturn: text += "\\r"
            case 0x20...0x7E: text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return text
    }

    // MARK: The pieces

    /// Whether `date` is an RFC 3339 date-time with a zone (RFC 3339 §5.6), its fields in range:
    /// the shape the protocol's dates take (`start`), so that a line the gateway would refuse
    /// is reported here, naming the line.
    static func isRFC3339(_ date: some Collection<UInt8>) -> Bool {
        let b = Array(date)
        guard b.count >= 20, b[4] == ASCII.minus, b[7] == ASCII.minus, b[10] == ASCII.t || b[10] == ASCII.lowerT,
            b[13] == ASCII.colon, b[16] == ASCII.colon,
            let year = whole(b, 0, 4), let month = whole(b, 5, 2), let day = whole(b, 8, 2),
            let hour = whole(b, 11, 2), let minute = whole(b, 14, 2), let second = whole(b, 17, 2),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour <= 23, minute <= 59, second <= 60  // 60: a leap second (RFC 3339 §5.7)
        else { return false }
        var index = 19
        if b[index] == ASCII.dot {
            let digits = b[(index + 1)...].prefix(while: isDigit).count
            guard (1...maxFractionDigits).contains(digits) else { return false }
            index += 1 + digits
        }
        guard index < b.count else { return false }
        if b[index] == ASCII.z || b[index] == ASCII.lowerZ { return index + 1 == b.count }
        guard b[index] == ASCII.plus || b[index] == ASCII.minus, b.count == index + 6, b[index + 3] == ASCII.colon,
            let hours = whole(b, index + 1, 2), let minutes = whole(b, index + 4, 2)
        else { return false }
        return hours <= 23 && minutes <= 59
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The decimal number of `count` digits at `start`, nil unless they are all digits.
    private static func whole(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        var value = 0
        for byte in bytes[start..<(start + count)] {
            guard isDigit(byte) else { return nil }
            value = value * 10 + Int(byte - ASCII.zero)
        }
        return value
    }

    private static func trimmed(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        let isPadding = { (byte: UInt8) in isSpace(byte) || byte == ASCII.carriageReturn }
        guard let first = bytes.firstIndex(where: { !isPadding($0) }), let last = bytes.lastIndex(where: { !isPadding($0) }) else {
            return []
        }
        return bytes[first...last]
    }

    /// Printable ASCII checked before, so decoding cannot replace anything.
    private static func ascii(_ bytes: some Collection<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
    private static func isSpace(_ byte: UInt8) -> Bool { byte == ASCII.space || byte == ASCII.tab }
    private static func isDigit(_ byte: UInt8) -> Bool { (ASCII.zero...ASCII.nine).contains(byte) }
}

/// The characters of the line format, by name.
enum ASCII {
    static let tab: UInt8 = 0x09
    static let newline: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let quote: UInt8 = 0x22
    static let plus: UInt8 = 0x2B
    static let comma: UInt8 = 0x2C
    static let minus: UInt8 = 0x2D
    static let dot: UInt8 = 0x2E
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let colon: UInt8 = 0x3A
    static let t: UInt8 = 0x54
    static let z: UInt8 = 0x5A
    static let backslash: UInt8 = 0x5C
    static let lowerT: UInt8 = 0x74
    static let lowerZ: UInt8 = 0x7A
}
