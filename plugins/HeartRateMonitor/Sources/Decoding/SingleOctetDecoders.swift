public import HealthModel
public import GATTDecoding

/// Decodes Body Sensor Location (0x2A38): one octet, 0 other … 6 foot (Heart Rate Service §3.2);
/// 7–255 are reserved.
public enum BodySensorLocationDecoder {
    /// - Throws: ``GATTDecodingError`` `.truncated` when empty, `.unexpectedLength` when longer
    ///   than one octet, `.reservedValue` for 7–255.
    public static func decode(_ payload: [UInt8]) throws(GATTDecodingError) -> HeartRateSensorLocation {
        let byte = try singleOctet(payload, .bodySensorLocation, field: "bodySensorLocation")
        guard let location = HeartRateSensorLocation(rawValue: Int(byte)) else {
            throw GATTDecodingError(
                .reservedValue, characteristic: .bodySensorLocation, field: "bodySensorLocation", offset: 0,
                needed: 1, available: 1, value: Int(byte))
        }
        return location
    }
}

/// Decodes Battery Level (0x2A19): one octet, a percentage 0–100 (Battery Service v1.0 §3.1).
public enum BatteryLevelDecoder {
    /// - Throws: ``GATTDecodingError`` `.truncated` when empty, `.unexpectedLength` when longer
    ///   than one octet, `.valueOutOfRange` above 100.
    public static func decode(_ payload: [UInt8]) throws(GATTDecodingError) -> Int {
        let byte = try singleOctet(payload, .batteryLevel, field: "batteryLevel")
        guard byte <= 100 else {
            throw GATTDecodingError(
                .valueOutOfRange, characteristic: .batteryLevel, field: "batteryLevel", offset: 0, needed: 1,
                available: 1, value: Int(byte))
        }
        return Int(byte)
    }
}

func singleOctet(_ payload: [UInt8], _ characteristic: GATTCharacteristic, field: String) throws(GATTDecodingError) -> UInt8 {
    guard let byte = payload.first else {
        throw GATTDecodingError(.truncated, characteristic: characteristic, field: field, offset: 0, needed: 1, available: 0)
    }
    guard payload.count == 1 else {
        throw GATTDecodingError(
            .unexpectedLength, characteristic: characteristic, field: field, offset: 1, needed: 1,
            available: payload.count - 1)
    }
    return byte
}
