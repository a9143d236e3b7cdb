public import FoundationEssentials

/// JSON text written straight into bytes, value by value, with the commas between members and
/// elements placed by the writer: for a value written many times a second whose fields are few
/// and known, where `JSONEncoder`'s generic containers cost more than the text itself (the live
/// board's events, ``QuantitySampleJSONWriter``'s numbers).
///
/// Strings are escaped as RFC 8259 requires (`"`, `\` and the control characters; the rest of
/// UTF-8 as it is), so no string needs another path and no line break is ever written: the text
/// fits on one line of a server-sent event. Numbers as `JSONEncoder` writes them; a number that is
/// not finite is refused, as HealthJSON's `.throw` strategy refuses it. Dates as HealthJSON writes
/// them (RFC 3339 with microseconds, UTC), a date outside its years refused.
public struct JSONByteWriter: Sendable {
    /// A value JSON or RFC 3339 cannot write.
    public struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        /// The member it was for.
        public var key: String
        public var description: String
    }

    /// The text so far.
    public private(set) var bytes: [UInt8] = []
    /// Whether the next member or element needs a comma before it.
    private var afterValue = false
    /// The key of the member being written, for a refusal.
    private var currentKey = ""

    /// An empty text with room for `capacity` bytes.
    public init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func openObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        afterValue = false
    }

    public mutating func closeObject() {
        bytes.append(UInt8(ascii: "}"))
        afterValue = true
    }

    public mutating func openArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        afterValue = false
    }

    public mutating func closeArray() {
        bytes.append(UInt8(ascii: "]"))
        afterValue = true
    }

    /// A member's key; its value is what is written next.
    public mutating func key(_ key: String) {
        separate()
        Self.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
        currentKey = key
    }

    public mutating func string(_ text: String) {
        separate()
        Self.appendString(text, to: &bytes)
        afterValue = true
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
        afterValue = true
    }

    public mutating func integer(_ value: Int) {
        separate()
        Self.appendInteger(Int64(value), to: &bytes)
        afterValue = true
    }

    /// A finite number; NaN and the infinities are refused.
    public mutating func number(_ value: Double) throws(Refusal) {
        guard value.isFinite else { throw Refusal(key: currentKey, description: "\(currentKey): \(value) is not a JSON number") }
        separate()
        Self.appendNumber(value, to: &bytes)
        afterValue = true
    }

    /// `date` as HealthJSON writes it; a date outside the years 0001-9999 is refused.
    public mutating func date(_ date: Date) throws(Refusal) {
        guard RFC3339.isRepresentable(date) else {
            throw Refusal(
                key: currentKey,
                description: "\(currentKey): date \(date.timeIntervalSince1970) s since 1970 is outside the years 0001-9999 that RFC 3339 can write")
        }
        separate()
        bytes.append(UInt8(ascii: "\""))
        RFC3339.append(date, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        afterValue = true
    }

    private mutating func separate() {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `"text"` with `"`, `\` and U+0000 to U+001F escaped.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Appends a finite number as `JSONEncoder` writes it: an integer below 2^53 in magnitude as
    /// its digits, any other value as its shortest round-trip `description` without a trailing
    /// `.0` (an exponent form, such as `1e-05`, is valid JSON as it is).
    static func appendNumber(_ value: Double, to out: inout [UInt8]) {
        if value == value.rounded(.towardZero), abs(value) < 9_007_199_254_740_992, !(value == 0 && value.sign == .minus) {
            appendInteger(Int64(value), to: &out)
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        out.append(contentsOf: text.utf8)
    }

    /// Appends the decimal digits of `value` (`String(value)`'s bytes) without making a `String`.
    public static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                let (quotient, remainder) = magnitude.quotientAndRemainder(dividingBy: 10)
                buffer[31 - count] = UInt8(truncatingIfNeeded: 48 + remainder)
                count += 1
                magnitude = quotient
            } while magnitude > 0
            out.append(contentsOf: buffer[(32 - count)...])
        }
    }
}
