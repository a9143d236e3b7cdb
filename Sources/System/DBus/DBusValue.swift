import LinuxSystem
import Synchronization

/// A value in the D-Bus type system (D-Bus Specification, "Type System").
///
/// Containers carry their element signatures so that empty arrays and dictionaries can still be
/// written. Reading a message produces these values; writing a method call takes them.
/// A unix fd (`h`) is a ``DBusUnixFD`` that owns a duplicate of the received descriptor.
public indirect enum DBusValue: Sendable, CustomStringConvertible {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A unix fd. Appending it to a message hands the descriptor over (``DBusUnixFD/take()``),
    /// so such a value can be sent once.
    case unixFD(DBusUnixFD)
    /// An array whose elements all have `elementSignature`.
    case array(elementSignature: String, [DBusValue])
    /// A dictionary `a{kv}`, kept as ordered entries.
    case dictionary(keySignature: String, valueSignature: String, [DBusDictionaryEntry])
    case structure([DBusValue])
    case variant(DBusValue)

    /// The value's D-Bus signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// The value inside any number of variants.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// The string of a `s`, `o` or `g` value (through variants), else nil.
    public var string: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    /// A boolean (through variants), else nil.
    public var bool: Bool? {
        if case .bool(let value) = unwrapped { return value }
        return nil
    }

    /// Any integer type (through variants) as `Int`, else nil.
    public var integer: Int? {
        switch unwrapped {
        case .byte(let v): Int(v)
        case .int16(let v): Int(v)
        case .uint16(let v): Int(v)
        case .int32(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int64(let v): Int(v)
        case .uint64(let v): Int(exactly: v)
        default: nil
        }
    }

    /// The bytes of an `ay` (through variants), else nil.
    public var bytes: [UInt8]? {
        guard case .array(_, let elements) = unwrapped else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(elements.count)
        for element in elements {
            guard case .byte(let byte) = element else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// The elements of an array (through variants), else nil.
    public var array: [DBusValue]? {
        if case .array(_, let elements) = unwrapped { return elements }
        return nil
    }

    /// The strings of an `as` or `ao` (through variants), else nil.
    public var strings: [String]? {
        guard let elements = array else { return nil }
        var strings: [String] = []
        for element in elements {
            guard let text = element.string else { return nil }
            strings.append(text)
        }
        return strings
    }

    /// A dictionary keyed by strings or object paths (`a{sv}`, `a{oa{...}}`), else nil.
    /// Later duplicate keys win.
    public var dictionary: [String: DBusValue]? {
        guard case .dictionary(_, _, let entries) = unwrapped else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.string else { return nil }
            result[key] = entry.value
        }
        return result
    }

    /// An `a{sv}` built from `entries`: each value is wrapped in a variant.
    public static func properties(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(
            keySignature: "s", valueSignature: "v",
            entries.map { DBusDictionaryEntry(key: .string($0.0), value: .variant($0.1)) })
    }

    /// An `ay`.
    public static func byteArray(_ bytes: [UInt8]) -> DBusValue {
        .array(elementSignature: "y", bytes.map(DBusValue.byte))
    }

    /// An `as`.
    public static func stringArray(_ strings: [String]) -> DBusValue {
        .array(elementSignature: "s", strings.map(DBusValue.string))
    }

    public var description: String {
        switch self {
        case .byte(let v): "\(v)"
        case .bool(let v): "\(v)"
        case .int16(let v): "\(v)"
        case .uint16(let v): "\(v)"
        case .int32(let v): "\(v)"
        case .uint32(let v): "\(v)"
        case .int64(let v): "\(v)"
        case .uint64(let v): "\(v)"
        case .double(let v): "\(v)"
        case .string(let v): "\"\(v)\""
        case .objectPath(let v): v
        case .signature(let v): "g\"\(v)\""
        case .unixFD: "<fd>"
        case .array(_, let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries):
            "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case .variant(let inner): "<\(inner)>"
        }
    }
}

/// One entry of a D-Bus dictionary.
public struct DBusDictionaryEntry: Sendable {
    /// A basic value (`s`, `o`, `y`, …).
    public var key: DBusValue
    /// Any value.
    public var value: DBusValue

    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

/// A unix file descriptor received over D-Bus (type `h`).
///
/// It owns a duplicate of the descriptor carried by the message: whoever calls ``take()`` owns
/// the descriptor from then on and must close it; if nobody takes it, it is closed when this
/// object is released, so a descriptor in an ignored reply never leaks.
public final class DBusUnixFD: Sendable {
    private let descriptor: Mutex<Int32?>

    /// Wraps `descriptor`, taking ownership of it.
    public init(owning descriptor: Int32) {
        self.descriptor = Mutex(descriptor)
    }

    /// Hands the descriptor over to the caller; nil if it was already taken.
    public func take() -> Int32? {
        descriptor.withLock { value in
            let taken = value
            value = nil
            return taken
        }
    }

    deinit {
        if let fd = descriptor.withLock({ $0 }) {
            FileDescriptor.closeRaw(fd)
        }
    }
}
