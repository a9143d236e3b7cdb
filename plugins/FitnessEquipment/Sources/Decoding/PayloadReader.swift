public import GATTDecoding
/// Reads little-endian fields from a payload in order, and names the field that is cut when the
/// payload ends early. GATT values are little-endian (Bluetooth Core Specification: multi-octet fields are little-endian).
struct PayloadReader {
    let bytes: [UInt8]
    let characteristic: FitnessCharacteristic
    private(set) var offset = 0

    init(_ bytes: [UInt8], _ characteristic: FitnessCharacteristic) {
        self.bytes = bytes
        self.characteristic = characteristic
    }

    /// Bytes after the last field read.
    var remaining: Int { bytes.count - offset }

    /// Reads `width` bytes (1…4) as an unsigned little-endian integer.
    mutating func unsigned(_ width: Int, _ field: String) throws(FitnessDecodingError) -> UInt32 {
        guard remaining >= width else {
            throw FitnessDecodingError(
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
    mutating func signed(_ width: Int, _ field: String) throws(FitnessDecodingError) -> Int32 {
        let raw = try unsigned(width, field)
        let shift = UInt32(32 - 8 * width)
        return Int32(bitPattern: raw << shift) >> Int32(shift)
    }

    mutating func uint8(_ field: String) throws(FitnessDecodingError) -> UInt8 {
        UInt8(try unsigned(1, field))
    }

    mutating func uint16(_ field: String) throws(FitnessDecodingError) -> UInt16 {
        UInt16(try unsigned(2, field))
    }

    mutating func sint16(_ field: String) throws(FitnessDecodingError) -> Int16 {
        Int16(try signed(2, field))
    }

    mutating func uint32(_ field: String) throws(FitnessDecodingError) -> UInt32 {
        try unsigned(4, field)
    }

    /// Fails with `.unexpectedLength` when bytes follow the value of a fixed-length characteristic.
    func expectEnd() throws(FitnessDecodingError) {
        guard remaining == 0 else {
            throw FitnessDecodingError(
                .unexpectedLength, characteristic: characteristic, field: "value", offset: offset,
                needed: offset, available: remaining)
        }
    }
}
