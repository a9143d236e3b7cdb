/// A strict RFC 8259 parser for configuration files, with messages a person can act on.
///
/// Foundation's parser reports a raw NUL byte inside a string as "expected an object", and
/// refuses a number beyond the range of `Double` (`1e400`) as "not valid JSON". This one names
/// the line and column of every syntax error, calls control characters by their names, and
/// parses an out-of-range number as ±infinity (and `1e-400` as 0) so that the key's own range
/// check reports it with the key path and the allowed range. Duplicate keys are errors: the
/// second would silently win otherwise. Nesting is limited to ``maximumDepth`` so that hostile
/// input cannot exhaust the stack.
public struct ConfigurationJSONParser: Sendable {
    /// A syntax error at a 1-based line and column.
    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        /// 1-based line.
        public var line: Int
        /// 1-based column, in bytes.
        public var column: Int
        /// What is wrong.
        public var reason: String

        /// `line 3, column 7: …`.
        public var description: String { "line \(line), column \(column): \(reason)" }
    }

    /// The deepest nesting of arrays and objects accepted.
    public static let maximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses one JSON value that fills the whole input (whitespace aside).
    /// - Throws: ``SyntaxError`` with the position and the reason.
    public static func parse(_ bytes: some Sequence<UInt8>) throws(SyntaxError) -> JSONValue {
        var parser = ConfigurationJSONParser(Array(bytes))
        if parser.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        parser.skipWhitespace()
        guard parser.index < parser.bytes.count else { throw parser.error("the file is empty") }
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else {
            throw parser.error("unexpected \(parser.describeCurrent()) after the end of the JSON value")
        }
        return value
    }

    private mutating func parseValue() throws(SyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected \(describeCurrent()), expected a value")
        }
    }

    private mutating func enter() throws(SyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error("nesting deeper than \(Self.maximumDepth) levels")
        }
    }

    private mutating func parseObject() throws(SyntaxError) -> JSONValue {
        try enter()
        index += 1
        var object: [String: JSONValue] = [:]
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            index += 1
            depth -= 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else { throw error("unexpected \(describeCurrent()), expected a key in double quotes") }
            let keyStart = index
            let key = try parseString()
            guard object[key] == nil else {
                index = keyStart
                throw error("the key \"\(Self.printable(key))\" appears twice in the same object")
            }
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { throw error("unexpected \(describeCurrent()), expected ':' after a key") }
            index += 1
            skipWhitespace()
            object[key] = try parseValue()
            skipWhitespace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                continue
            }
            guard peek(UInt8(ascii: "}")) else { throw error("unexpected \(describeCurrent()), expected ',' or '}'") }
            index += 1
            depth -= 1
            return .object(object)
        }
    }

    private mutating func parseArray() throws(SyntaxError) -> JSONValue {
        try enter()
        index += 1
        var array: [JSONValue] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            depth -= 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            array.append(try parseValue())
            skipWhitespace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                continue
            }
            guard peek(UInt8(ascii: "]")) else { throw error("unexpected \(describeCurrent()), expected ',' or ']'") }
            index += 1
            depth -= 1
            return .array(array)
        }
    }

    private mutating func parseString() throws(SyntaxError) -> String {
        index += 1
        // Most strings hold no escape and no control character: made from their bytes at once
        // (an adapter's line is mostly such strings, and it is decoded for every reading).
        var end = index
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            guard let text = String(validating: bytes[index..<end], as: UTF8.self) else { throw error("a string is not valid UTF-8") }
            index = end + 1
            return text
        }
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush() throws(SyntaxError) {
            guard !run.isEmpty else { return }
            guard let text = String(validating: run, as: UTF8.self) else {
                throw error("a string is not valid UTF-8")
            }
            scalars.append(contentsOf: text.unicodeScalars)
            run.removeAll(keepingCapacity: true)
        }
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                try flush()
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flush()
                index += 1
                scalars.append(try parseEscape())
            case 0x00:
                throw error("a NUL byte (0x00) inside a string; control characters must be escaped, and a NUL is refused in every setting")
            case 0x01..<0x20:
                throw error("a raw control character (0x\(String(byte, radix: 16, uppercase: true))) inside a string; escape it")
            default:
                run.append(byte)
                index += 1
            }
        }
    }

    private mutating func parseEscape() throws(SyntaxError) -> Unicode.Scalar {
        guard index < bytes.count else { throw error("unterminated escape sequence") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let first = try parseHex4()
            if (0xD800..<0xDC00).contains(first) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("a lone UTF-16 high surrogate \\u\(String(first, radix: 16, uppercase: true))")
                }
                index += 2
                let second = try parseHex4()
                guard (0xDC00..<0xE000).contains(second) else {
                    throw error("a UTF-16 high surrogate not followed by a low surrogate")
                }
                let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                guard let scalar = Unicode.Scalar(combined) else { throw error("an invalid surrogate pair") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(first) else {
                throw error("a lone UTF-16 low surrogate \\u\(String(first, radix: 16, uppercase: true))")
            }
            return scalar
        default:
            index -= 1
            throw error("an invalid escape \\\(describeCurrent())")
        }
    }

    private mutating func parseHex4() throws(SyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(SyntaxError) -> Double {
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - first
        }
        if peek(UInt8(ascii: "-")) { index += 1 }
        guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else {
            throw error("a number needs digits after '-'")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                throw error("a number must not have leading zeros")
            }
        } else {
            _ = digits()
        }
        if peek(UInt8(ascii: ".")) {
            index += 1
            guard digits() > 0 else { throw error("a number needs digits after '.'") }
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard digits() > 0 else { throw error("a number needs digits in its exponent") }
        }
        // The grammar above admits only what strtod reads; it rounds an out-of-range magnitude to
        // ±infinity or 0, which the key's range check then reports.
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text) else {
            index = start
            throw error("\(text) is not a number")
        }
        return value
    }

    private mutating func expectLiteral(_ literal: String) throws(SyntaxError) {
        let expected = Array(literal.utf8)
        guard bytes[index...].starts(with: expected) else {
            throw error("unexpected \(describeCurrent()), expected a value")
        }
        index += expected.count
    }

    private mutating func skipWhitespace() {
        while index < bytes.count,
            [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains(bytes[index])
        {
            index += 1
        }
    }

    private func peek(_ byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
    }

    private func describeCurrent() -> String {
        guard index < bytes.count else { return "end of input" }
        let byte = bytes[index]
        switch byte {
        case 0x00: return "NUL byte (0x00)"
        case 0x21..<0x7F: return "'\(Character(Unicode.Scalar(byte)))'"
        default: return "byte 0x\(String(byte, radix: 16, uppercase: true))"
        }
    }

    private func error(_ reason: String) -> SyntaxError {
        var line = 1
        var column = 1
        for byte in bytes[..<min(index, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return SyntaxError(line: line, column: column, reason: reason)
    }

    /// `text` with control characters escaped, for messages.
    public static func printable(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                result += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
