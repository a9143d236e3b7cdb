public import GATTDecoding
/// CSC Feature (0x2A5C): which data a speed and cadence sensor supports (CSCS v1.0, CSC Feature).
public struct CSCFeature: Hashable, Sendable {
    /// The 16-bit value as sent.
    public var rawValue: UInt16

    /// Creates the feature set from its raw value.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Bit 0: the sensor sends wheel revolution data.
    public var wheelRevolutionDataSupported: Bool { rawValue & 0x0001 != 0 }
    /// Bit 1: the sensor sends crank revolution data.
    public var crankRevolutionDataSupported: Bool { rawValue & 0x0002 != 0 }
    /// Bit 2: the sensor can be mounted in several locations (Sensor Location is meaningful).
    public var multipleSensorLocationsSupported: Bool { rawValue & 0x0004 != 0 }
}

/// Decodes CSC Feature values. Pure.
public enum CSCFeatureDecoder {
    /// - Throws: ``FitnessDecodingError`` `.truncated` below two bytes, `.unexpectedLength` above.
    public static func decode(_ payload: [UInt8]) throws(FitnessDecodingError) -> CSCFeature {
        var reader = PayloadReader(payload, .cscFeature)
        let value = try reader.uint16("cscFeature")
        try reader.expectEnd()
        return CSCFeature(rawValue: value)
    }
}
