/// Writes a FIT file (Garmin's Flexible and Interoperable Data Transfer protocol, version 2.0):
/// the 14-byte header with its CRC, definition and data messages (little-endian, normal headers,
/// one local message type per global message), and the file CRC. Values are given already in
/// the profile's units and scale; a nil value is written as the base type's invalid value.
///
/// The CRC is CRC-16/ARC (reflected polynomial 0xA001, initial 0), as the FIT SDK computes it
/// nibble by nibble; `FITWriter.crc("123456789")` is 0xBB3D.
public struct FITWriter: Sendable {
    /// A field's base type: its number in the definition, its size and its invalid value.
    public enum BaseType: UInt8, Sendable {
        case enumeration = 0x00
        case uint8 = 0x02
        case uint16 = 0x84
        case uint32 = 0x86
        case uint32z = 0x8C

        var size: Int {
            switch self {
            case .enumeration, .uint8: 1
            case .uint16: 2
            case .uint32, .uint32z: 4
            }
        }

        var invalid: UInt64 {
            switch self {
            case .enumeration, .uint8: 0xFF
            case .uint16: 0xFFFF
            case .uint32: 0xFFFF_FFFF
            case .uint32z: 0
            }
        }
    }

    /// One field of a message: its number in the global message, its base type and its value.
    public struct Field: Sendable {
        public var number: UInt8
        public var type: BaseType
        public var value: UInt64?

        public init(_ number: UInt8, _ type: BaseType, _ value: UInt64?) {
            self.number = number
            self.type = type
            self.value = value
        }
    }

    /// The profile version written in the header (21.40).
    public static let profileVersion: UInt16 = 2140

    private var data: [UInt8] = []
    /// The definition each local message type holds now: global number and field layout.
    private var definitions: [UInt8: (global: UInt16, layout: [FieldLayout])] = [:]
    private var locals: [UInt16: UInt8] = [:]

    private struct FieldLayout: Equatable {
        var number: UInt8
        var type: BaseType
    }

    public init() {}

    /// Appends a data message of global message `global`, preceded by its definition when the
    /// local type it uses was defined differently (or not at all).
    public mutating func message(_ global: UInt16, _ fields: [Field]) {
        let local = locals[global] ?? {
            let next = UInt8(locals.count % 16)
            locals[global] = next
            return next
        }()
        let layout = fields.map { FieldLayout(number: $0.number, type: $0.type) }
        if definitions[local]?.global != global || definitions[local]?.layout != layout {
            data.append(0x40 | local)
            data += [0, 0]  // reserved, little-endian
            append(UInt64(global), size: 2)
            data.append(UInt8(fields.count))
            for field in fields { data += [field.number, UInt8(field.type.size), field.type.rawValue] }
            definitions[local] = (global, layout)
        }
        data.append(local)
        for field in fields {
            let value = field.value.map { min($0, field.type.invalid == 0 ? UInt64(UInt32.max) : field.type.invalid - 1) }
            append(value ?? field.type.invalid, size: field.type.size)
        }
    }

    private mutating func append(_ value: UInt64, size: Int) {
        for index in 0..<size { data.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    /// The whole file: header, messages, CRC.
    public func file() -> [UInt8] {
        var header: [UInt8] = [14, 0x20]
        header += [UInt8(Self.profileVersion & 0xFF), UInt8(Self.profileVersion >> 8)]
        let size = UInt32(data.count)
        header += (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * UInt32($0))) }
        header += Array(".FIT".utf8)
        let headerCRC = Self.crc(header)
        header += [UInt8(headerCRC & 0xFF), UInt8(headerCRC >> 8)]
        var file = header + data
        let crc = Self.crc(file)
        file += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        return file
    }

    /// CRC-16/ARC of `bytes`, FIT's checksum.
    public static func crc(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        return crc
    }
}
