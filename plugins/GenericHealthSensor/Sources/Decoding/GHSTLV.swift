public import GATTDecoding

/// One type-length-value entry: an attribute of an observation's header (flags bit 9) or one
/// entry of a TLV-encoded observation (class 0x08).
///
/// Sent as type (uint32, an MDC attribute id), length (uint16, the value's bytes, the format
/// octet not counted: STMicroelectronics' GHS sample and Philips' GHS simulator both write it
/// so), format (uint8, a GATT Characteristic Presentation Format number) and the value. The
/// bytes are kept as sent; ``value`` reads them where the format says how.
public struct GHSTLV: Hashable, Sendable {
    /// The MDC attribute id.
    public var type: UInt32
    /// The format octet as sent (``GHSValueFormat`` when known).
    public var format: UInt8
    /// The value's bytes as sent.
    public var bytes: [UInt8]

    /// An entry from its parts.
    public init(type: UInt32, format: UInt8, bytes: [UInt8]) {
        self.type = type
        self.format = format
        self.bytes = bytes
    }

    /// The format, nil for a number this decoder does not know.
    public var knownFormat: GHSValueFormat? { GHSValueFormat(rawValue: format) }

    /// The value read by its format; nil for a structure, an unknown format, or a fixed-width
    /// format whose length is not its width (STMicroelectronics' sample sends a uint8 in three
    /// bytes: kept as ``bytes`` only, rather than guessing which byte is meant).
    public var value: GHSTLVValue? { knownFormat?.read(bytes) }

    /// Reads one entry.
    static func read(_ reader: inout GATTPayloadReader<GHSCharacteristic>, _ field: String) throws(GHSDecodingError) -> GHSTLV {
        let type = try reader.uint32("\(field).type")
        let length = Int(try reader.uint16("\(field).length"))
        let format = try reader.uint8("\(field).format")
        let bytes = try reader.bytes(length, "\(field).value")
        return GHSTLV(type: type, format: format, bytes: bytes)
    }

    /// Reads a uint8 count and that many entries (each at least seven bytes).
    static func readList(
        _ reader: inout GATTPayloadReader<GHSCharacteristic>, _ field: String
    ) throws(GHSDecodingError) -> [GHSTLV] {
        let count = try reader.count(field, itemSize: 7)
        var list: [GHSTLV] = []
        list.reserveCapacity(count)
        for _ in 0..<count { list.append(try read(&reader, field)) }
        return list
    }
}

/// The value of a ``GHSTLV`` read by its format.
public enum GHSTLVValue: Hashable, Sendable {
    case boolean(Bool)
    case unsigned(UInt64)
    case signed(Int64)
    /// An IEEE-754 binary32 or binary64 number.
    case number(Double)
    /// An IEEE 11073 SFLOAT or FLOAT.
    case medical(MedicalFloat)
    case text(String)
}

/// The format numbers of the GATT Characteristic Presentation Format (Bluetooth Assigned
/// Numbers, "Formats") that a TLV entry can name and this decoder reads.
public enum GHSValueFormat: UInt8, Hashable, Sendable, CaseIterable {
    case boolean = 0x01
    case uint8 = 0x04
    case uint16 = 0x06
    case uint24 = 0x07
    case uint32 = 0x08
    case uint48 = 0x09
    case uint64 = 0x0A
    case sint8 = 0x0C
    case sint16 = 0x0E
    case sint24 = 0x0F
    case sint32 = 0x10
    case sint48 = 0x11
    case sint64 = 0x12
    case float32 = 0x14
    case float64 = 0x15
    case sfloat = 0x16
    case float = 0x17
    case utf8s = 0x19
    case structure = 0x1B

    /// The value's width in bytes, nil for variable-length formats.
    public var width: Int? {
        switch self {
        case .boolean, .uint8, .sint8: 1
        case .uint16, .sint16, .sfloat: 2
        case .uint24, .sint24: 3
        case .uint32, .sint32, .float32, .float: 4
        case .uint48, .sint48: 6
        case .uint64, .sint64, .float64: 8
        case .utf8s, .structure: nil
        }
    }

    /// The name for JSON and logs: the case's name (`uint8`, `sfloat`, `utf8s`, …).
    public var name: String { "\(self)" }

    /// Reads `bytes` (little-endian), nil when the length is not the width, the text is not
    /// UTF-8, or the format is a structure.
    func read(_ bytes: [UInt8]) -> GHSTLVValue? {
        if let width { guard bytes.count == width else { return nil } }
        var raw: UInt64 = 0
        for (index, byte) in bytes.prefix(8).enumerated() { raw |= UInt64(byte) << UInt64(8 * index) }
        // Sign-extends a value of `bytes.count` bytes.
        var signed: Int64 {
            let shift = UInt64(64 - 8 * bytes.count)
            return Int64(bitPattern: raw << shift) >> Int64(shift)
        }
        switch self {
        case .boolean: return bytes[0] <= 1 ? .boolean(bytes[0] == 1) : nil
        case .uint8, .uint16, .uint24, .uint32, .uint48, .uint64: return .unsigned(raw)
        case .sint8, .sint16, .sint24, .sint32, .sint48, .sint64: return .signed(signed)
        case .float32: return .number(Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw))))
        case .float64: return .number(Double(bitPattern: raw))
        case .sfloat: return .medical(.sfloat(UInt16(truncatingIfNeeded: raw)))
        case .float: return .medical(.float(UInt32(truncatingIfNeeded: raw)))
        case .utf8s: return String(validating: bytes, as: UTF8.self).map { .text($0) }
        case .structure: return nil
        }
    }
}
