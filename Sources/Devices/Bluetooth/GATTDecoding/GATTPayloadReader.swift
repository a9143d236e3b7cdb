/// Reads little-endian fields from a characteristic value in order, and names the field that is
/// cut when the value ends early. GATT values are little-endian (Bluetooth Core Specification,
/// Vol 3, Part G: multi-octet fields are sent least significant octet first).
public struct GATTPayloadReader<Characteristic: DecodedCharacteristic> {
    /// The value being read.
    public let bytes: [UInt8]
    /// The characteristic named in errors.
    public let characteristic: Characteristic
    /// Where the next field starts.
    public private(set) var offset = 0

    /// A reader at the start of `bytes`.
    public init(_ bytes: [UInt8], _ characteristic: Characteristic) {
        self.bytes = bytes
        self.characteristic = characteristic
    }

    /// Bytes after the last field read.
    public var remaining: Int { bytes.count - offset }

    /// Reads `width` bytes (1…4) as an unsigned little-endian integer.
    public mutating func unsigned(
        _ width: Int, _ field: String
    ) throws(CharacteristicDecodingError<Characteristic>) -> UInt32 {
        guard remaining >= width else {
            throw CharacteristicDecodingError(
                .truncated, characteristic: characteristic, field: field, offset: offset, needed: width,
                available: max(0, remaining))
        }
        var value: UInt32 = 0
        for index in 0..<width {
            value |= UInt32(bytes[offset + index]) << (8 * UInt32(index))
        }
        offset += width
        return value
    }

    /// Reads `width` bytes (1…4) as a two's-complement little-endian integer.
    public mutating func signed(_ width: Int, _ field: String) throws(CharacteristicDecodingError<Characteristic>) -> Int32 {
        let raw = try unsigned(width, field)
        let shift = UInt32(32 - 8 * width)
        return Int32(bitPattern: raw << shift) >> Int32(shift)
    }

    /// A 16-bit IEEE 11073-20601 SFLOAT (``MedicalFloat``).
    public mutating func sfloat(_ field: String) throws(CharacteristicDecodingError<Characteristic>) -> MedicalFloat {
        .sfloat(UInt16(try unsigned(2, field)))
    }

    /// A 32-bit IEEE 11073-20601 FLOAT (``MedicalFloat``).
    public mutating func float(_ field: String) throws(CharacteristicDecodingError<Characteristic>) -> MedicalFloat {
        .float(try unsigned(4, field))
    }

    public mutating func uint8(_ field: String) throws(CharacteristicDecodingError<Characteristic>) -> UInt8 {
        UInt8(try unsigned(1, field))
    }

    public mutating func uint16(_ field: String) throws(CharacteristicDecodingError<Characteristic>) -> UInt16 {
        UInt16(try unsigned(2, field))
    }

    public mutating func sint16(_ field: String) throws(CharacteristicDecodingError<Characteristic>) -> Int16 {
        Int16(try signed(2, field))
    }

    public mutating func uint32(_ field: String) throws(CharacteristicDecodingError<Characteristic>) -> UInt32 {
        try unsigned(4, field)
    }

    /// Fails with `.unexpectedLength` when bytes follow the value of a fixed-length characteristic.
    public func expectEnd() throws(CharacteristicDecodingError<Characteristic>) {
        guard remaining == 0 else {
            throw CharacteristicDecodingError(
                .unexpectedLength, characteristic: characteristic, field: "value", offset: offset,
                needed: offset, available: remaining)
        }
    }
}
