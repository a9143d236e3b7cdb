#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// Text formatted as printf(3) formats it (vsnprintf), for the conversions the gateway uses
    /// (`%.1f`, `%+.0f`, `%04ld`, `%02lX`…). Pass a Swift `Int` with an `l` length modifier
    /// (`%ld`, `%02lX`): it is a C `long`.
    ///
    /// FoundationEssentials has no `String(format:)`, and full Foundation's brings its locale and
    /// ICU tables into the process; C's formatting is the same for these conversions in the "C"
    /// locale, which a process has until it calls setlocale(3).
    public init(cFormat format: String, _ arguments: any CVarArg...) {
        self.init(cFormat: format, arguments: arguments)
    }

    /// ``init(cFormat:_:)`` with the arguments in an array.
    public init(cFormat format: String, arguments: [any CVarArg]) {
        // A va_list is consumed by one call: one to measure, one to write.
        let length = withVaList(arguments) { vsnprintf(nil, 0, format, $0) }
        guard length > 0 else {
            self = ""
            return
        }
        var buffer = [CChar](repeating: 0, count: Int(length) + 1)
        _ = buffer.withUnsafeMutableBufferPointer { bytes in
            withVaList(arguments) { vsnprintf(bytes.baseAddress, bytes.count, format, $0) }
        }
        self = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension StringProtocol {
    /// The text without the leading and trailing characters that match `isTrimmed`.
    public func trimmed(where isTrimmed: (Character) -> Bool = { $0.isWhitespace }) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}

extension StringProtocol {
    /// The text cut or filled with spaces to exactly `length` characters, for columns.
    public func padded(toLength length: Int) -> String {
        count >= length ? String(prefix(length)) : String(self) + String(repeating: " ", count: length - count)
    }
}

extension String {
    /// A count with its noun, singular for one and plural otherwise: `1 record`, `2 records`,
    /// `0 records`; the plural is the noun with an `s` unless `plural` is given
    /// (`String(count: n, "entry", plural: "entries")`). Messages say this, never `record(s)`.
    public init(count: some BinaryInteger, _ noun: String, plural: String? = nil) {
        self = "\(count) " + (count == 1 ? noun : plural ?? noun + "s")
    }
}
