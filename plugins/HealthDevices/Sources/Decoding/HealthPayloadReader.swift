import GATTDecoding

/// The health characteristics' field reader, with the Date Time field (the IEEE-11073 numbers
/// are every reader's: ``GATTPayloadReader/sfloat(_:)``).
typealias HealthPayloadReader = GATTPayloadReader<HealthCharacteristic>

extension GATTPayloadReader where Characteristic == HealthCharacteristic {

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
