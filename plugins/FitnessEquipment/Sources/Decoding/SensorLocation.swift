public import GATTDecoding
/// Sensor Location (0x2A5D) of a cycling sensor: one octet, 0–16 defined by the GATT
/// Specification Supplement (Sensor Location), 17–255 reserved.
public enum SensorLocation: Int, Hashable, Sendable, CaseIterable {
    case other = 0
    case topOfShoe = 1
    case inShoe = 2
    case hip = 3
    case frontWheel = 4
    case leftCrank = 5
    case rightCrank = 6
    case leftPedal = 7
    case rightPedal = 8
    case frontHub = 9
    case rearDropout = 10
    case chainstay = 11
    case rearWheel = 12
    case rearHub = 13
    case chest = 14
    case spider = 15
    case chainRing = 16

    /// The case name, for JSON and logs.
    public var name: String { String(describing: self) }
}

/// Decodes Sensor Location values. Pure.
public enum SensorLocationDecoder {
    /// - Throws: ``FitnessDecodingError`` `.truncated` when empty, `.unexpectedLength` when
    ///   longer than one octet, `.reservedValue` for 17–255.
    public static func decode(_ payload: [UInt8]) throws(FitnessDecodingError) -> SensorLocation {
        var reader = PayloadReader(payload, .sensorLocation)
        let byte = try reader.uint8("sensorLocation")
        try reader.expectEnd()
        guard let location = SensorLocation(rawValue: Int(byte)) else {
            throw FitnessDecodingError(
                .reservedValue, characteristic: .sensorLocation, field: "sensorLocation", offset: 0,
                needed: 1, available: 1, value: Int(byte))
        }
        return location
    }
}
