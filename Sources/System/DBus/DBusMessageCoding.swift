import CSystemd
import LinuxSystem

/// Reads and writes ``DBusValue``s from and to an `sd_bus_message` (sd_bus_message_read_basic(3),
/// sd_bus_message_append_basic(3), sd_bus_message_peek_type(3)). Internal: C types stay here.
struct DBusMessageCoding {
    let sd: SDBus

    /// Reads every remaining value at the current level of `message`.
    func readAll(_ message: OpaquePointer) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while let value = try readNext(message) {
            values.append(value)
        }
        return values
    }

    /// Reads the next value, or nil at the end of the current container.
    func readNext(_ message: OpaquePointer) throws(DBusError) -> DBusValue? {
        var type: CChar = 0
        var contentsPointer: UnsafePointer<CChar>?
        let peeked = sd.messagePeekType(message, &type, &contentsPointer)
        try check(peeked, "peek type")
        if peeked == 0 { return nil }
        let contents = contentsPointer.map { String(cString: $0) } ?? ""
        let typeCode = UInt8(bitPattern: type)
        switch typeCode {
        case UInt8(ascii: "a"):
            return try readArray(message, type: type, contents: contents)
        case UInt8(ascii: "r"), UInt8(ascii: "e"):
            try check(sd.messageEnterContainer(message, type, contents), "enter structure")
            let fields = try readAll(message)
            try check(sd.messageExitContainer(message), "exit structure")
            return .structure(fields)
        case UInt8(ascii: "v"):
            try check(sd.messageEnterContainer(message, type, contents), "enter variant")
            guard let inner = try readNext(message) else {
                throw DBusError(name: DBusError.invalidSignature, message: "empty variant")
            }
            try check(sd.messageExitContainer(message), "exit variant")
            return .variant(inner)
        case UInt8(ascii: "h"):
            return try readUnixFD(message)
        default:
            return try readBasic(message, type: type)
        }
    }

    /// The opening of a dict entry's signature, as sd-bus reports an `a{kv}` array's contents.
    private static let dictionaryEntryOpening: Character = "{"

    /// Reads the array the message is at, whose elements have the signature `contents`: a
    /// dictionary when they are dict entries.
    private func readArray(_ message: OpaquePointer, type: CChar, contents: String) throws(DBusError) -> DBusValue {
        try check(sd.messageEnterContainer(message, type, contents), "enter array")
        let elements = try readAll(message)
        try check(sd.messageExitContainer(message), "exit array")
        guard contents.first == Self.dictionaryEntryOpening else { return .array(elementSignature: contents, elements) }
        // a{kv}: every element is a dict entry read as a two-field structure.
        let inner = String(contents.dropFirst().dropLast())
        let (keySignature, valueSignature) = Self.splitFirst(inner)
        var entries: [DBusDictionaryEntry] = []
        for element in elements {
            guard case .structure(let fields) = element, fields.count == 2 else {
                throw DBusError(name: DBusError.invalidSignature, message: "malformed dict entry")
            }
            entries.append(DBusDictionaryEntry(key: fields[0], value: fields[1]))
        }
        return .dictionary(keySignature: keySignature, valueSignature: valueSignature, entries)
    }

    /// Reads the unix fd the message is at, as a duplicate of its own.
    private func readUnixFD(_ message: OpaquePointer) throws(DBusError) -> DBusValue {
        var fd: Int32 = -1
        try check(sd.readUnixFD(message, &fd), "read unix fd")
        // The message owns `fd` and closes it when freed; keep our own duplicate.
        let copy: Int32
        do {
            copy = try FileDescriptor.duplicate(fd)
        } catch {
            throw DBusError(errno: error.rawValue, "dup of a received unix fd")
        }
        return .unixFD(DBusUnixFD(owning: copy))
    }

    private func readBasic(_ message: OpaquePointer, type: CChar) throws(DBusError) -> DBusValue {
        func read<T: BitwiseCopyable>(_ initial: T) throws(DBusError) -> T {
            var value = initial
            try check(sd.messageReadBasic(message, type, &value), "read basic")
            return value
        }
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "y"): return .byte(try read(UInt8(0)))
        case UInt8(ascii: "b"): return .bool(try read(Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try read(Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try read(UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try read(Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try read(UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try read(Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try read(UInt64(0)))
        case UInt8(ascii: "d"): return .double(try read(Double(0)))
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            var pointer: UnsafePointer<CChar>?
            try check(sd.messageReadBasic(message, type, &pointer), "read string")
            let text = pointer.map { String(cString: $0) } ?? ""
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "o"): return .objectPath(text)
            case UInt8(ascii: "g"): return .signature(text)
            default: return .string(text)
            }
        default:
            throw DBusError(
                name: DBusError.invalidSignature,
                message: "unsupported D-Bus type '\(Character(Unicode.Scalar(UInt8(bitPattern: type))))'")
        }
    }

    /// Appends `value` to `message`.
    func append(_ value: DBusValue, to message: OpaquePointer) throws(DBusError) {
        func basic<T: BitwiseCopyable>(_ code: Character, _ value: T) throws(DBusError) {
            var copy = value
            try check(sd.messageAppendBasic(message, CChar(code.asciiValue ?? 0), &copy), "append")
        }
        func container(
            _ code: Character, _ contents: String, _ body: () throws(DBusError) -> Void
        ) throws(DBusError) {
            try check(sd.messageOpenContainer(message, CChar(code.asciiValue ?? 0), contents), "open container")
            try body()
            try check(sd.messageCloseContainer(message), "close container")
        }
        switch value {
        case .byte(let v): try basic("y", v)
        case .bool(let v): try basic("b", Int32(v ? 1 : 0))
        case .int16(let v): try basic("n", v)
        case .uint16(let v): try basic("q", v)
        case .int32(let v): try basic("i", v)
        case .uint32(let v): try basic("u", v)
        case .int64(let v): try basic("x", v)
        case .uint64(let v): try basic("t", v)
        case .double(let v): try basic("d", v)
        case .string(let text), .objectPath(let text), .signature(let text):
            let code: Character =
                switch value {
                case .objectPath: "o"
                case .signature: "g"
                default: "s"
                }
            let result = text.withCString { sd.messageAppendBasic(message, CChar(code.asciiValue ?? 0), $0) }
            try check(result, "append string")
        case .unixFD(let fd):
            guard let descriptor = fd.take() else {
                throw DBusError(name: DBusError.invalidArgs, message: "unix fd already handed over")
            }
            // sd-bus duplicates the fd it appends; we close our copy afterwards.
            defer { FileDescriptor.closeRaw(descriptor) }
            try basic("h", descriptor)
        case .array(let element, let elements):
            try container("a", element) { () throws(DBusError) in
                for element in elements { try append(element, to: message) }
            }
        case .dictionary(let key, let valueSignature, let entries):
            try container("a", "{" + key + valueSignature + "}") { () throws(DBusError) in
                for entry in entries {
                    try container("e", key + valueSignature) { () throws(DBusError) in
                        try append(entry.key, to: message)
                        try append(entry.value, to: message)
                    }
                }
            }
        case .structure(let fields):
            try container("r", fields.map(\.signature).joined()) { () throws(DBusError) in
                for field in fields { try append(field, to: message) }
            }
        case .variant(let inner):
            try container("v", inner.signature) { () throws(DBusError) in
                try append(inner, to: message)
            }
        }
    }

    /// Splits a signature into its first complete type and the rest (`sv` → `s`, `v`).
    static func splitFirst(_ signature: String) -> (String, String) {
        let characters = Array(signature)
        var index = 0
        func skipOne() {
            guard index < characters.count else { return }
            let character = characters[index]
            index += 1
            switch character {
            case "a": skipOne()
            case "(", "{":
                let close: Character = character == "(" ? ")" : "}"
                while index < characters.count, characters[index] != close { skipOne() }
                index += 1
            default: break
            }
        }
        skipOne()
        return (String(characters[0..<min(index, characters.count)]), String(characters[min(index, characters.count)...]))
    }

    private func check(_ result: Int32, _ what: String) throws(DBusError) {
        if result < 0 { throw DBusError(errno: -result, what) }
    }
}
