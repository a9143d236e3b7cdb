import GATTDecoding

/// Reads little-endian fields from a payload in order, and names the field that is cut when the
/// payload ends early. GATT values are little-endian.
struct HealthPayloadReader {
    let bytes: [UInt8]
    let characteristic: HealthCharacteristic
    private(set) var offset = 0

    init(_ bytes: [UInt8], _ characteristic: HealthCharacteristic) {
        self.bytes = bytes
        self.characteristic = characteristic
    }

    var remaining: Int { bytes.count - offset }

    mutating func unsigned(_ width: Int, _ field: String) throws(HealthDecodingError) -> UInt32 {
        guard remaining >= width else {
            throw HealthDecodingError(
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

    mutating func uint8(_ field: String) throws(HealthDecodingError) -> UInt8 { UInt8(try unsigned(1, field)) }
    mutating func uint16(_ field: String) throws(HealthDecodingError) -> UInt16 { UInt16(try unsigned(2, field)) }
    mutating func sint16(_ field: String) throws(HealthDecodingError) -> Int16 {
        Int16(bitPattern: UInt16(try unsigned(2, field)))
    }
    mutating func sfloat(_ field: String) throws(HealthDecodingError) -> MedicalFloat {
        .sfloat(UInt16(try unsigned(2, field)))
    }
    mutating func float(_ field: String) throws(HealthDecodingError) -> MedicalFloat {
        .float(try unsigned(4, field))
    }

    /// A 7-byte Date Time.
    mutating func timestamp(_ field: String) throws(HealthDecodingError) -> DeviceTimestamp {
        guard remaining >= 7 else {
            throw HealthDecodingError(
                .truncated, characteristic: characteristic, field: field, offset: offset, needed: 7,
                available: max(0, remaining))
        }
        let year = Int(try uint16(field))
        let parts = [try uint8(field), try uint8(field), try uint8(field), try uint8(field), try uint8(field)].map(Int.init)
        return DeviceTimestamp(
            year: year, month: parts[0], day: parts[1], hours: parts[2], minutes: parts[3], seconds: parts[4])
    }
}
