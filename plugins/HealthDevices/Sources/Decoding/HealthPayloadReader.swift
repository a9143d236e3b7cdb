import GATTDecoding

/// The health characteristics' field reader, with the IEEE-11073 numbers and the Date Time field.
typealias HealthPayloadReader = GATTPayloadReader<HealthCharacteristic>

extension GATTPayloadReader where Characteristic == HealthCharacteristic {
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
