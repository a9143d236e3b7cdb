/// Parses and formats payload hex, as the CLI, the logs and the fixtures write it.
public enum HexPayload {
    /// Why a hex string does not parse.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The text that did not parse.
        public var text: String
        /// What is wrong with it.
        public var reason: String
        /// The text and the reason, for stderr and logs.
        public var description: String { "\"\(text)\" is not a hex payload: \(reason)" }
    }

    /// Parses `16485401EC02`, `16 48 54 01 ec 02`, `16:48:54` or `0x1648…`. Spaces, colons and
    /// dashes between bytes are ignored.
    public static func parse(_ text: String) throws(ParseError) -> [UInt8] {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in digits.utf8 {
            if character == UInt8(ascii: " ") || character == UInt8(ascii: ":") || character == UInt8(ascii: "-") {
                guard high == nil else { throw ParseError(text: text, reason: "a separator splits a byte") }
                continue
            }
            guard let nibble = nibble(character) else {
                throw ParseError(text: text, reason: "'\(Character(Unicode.Scalar(character)))' is not a hex digit")
            }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        guard high == nil else { throw ParseError(text: text, reason: "odd number of hex digits") }
        return bytes
    }

    /// Upper-case hex without separators.
    public static func format(_ bytes: [UInt8]) -> String {
        let digits: [Character] = Array("0123456789ABCDEF")
        var text = ""
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
