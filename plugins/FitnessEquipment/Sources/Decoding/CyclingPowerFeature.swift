public import GATTDecoding
/// Cycling Power Feature (0x2A65): what a power meter supports (CPS v1.1, Cycling Power Feature).
public struct CyclingPowerFeature: Hashable, Sendable {
    /// The 32-bit value as sent.
    public var rawValue: UInt32

    /// Creates the feature set from its raw value.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The names of the one-bit features of CPS v1.1 Cycling Power Feature, by bit number. Bit 16 is the
    /// sensor measurement context (set: torque based); bits 20–21 are a two-bit field reported
    /// by ``distributedSystemSupport`` instead.
    public static let bitNames: [Int: String] = [
        0: "pedalPowerBalance", 1: "accumulatedTorque", 2: "wheelRevolutionData",
        3: "crankRevolutionData", 4: "extremeMagnitudes", 5: "extremeAngles",
        6: "topAndBottomDeadSpotAngles", 7: "accumulatedEnergy", 8: "offsetCompensationIndicator",
        9: "offsetCompensation", 10: "measurementContentMasking", 11: "multipleSensorLocations",
        12: "crankLengthAdjustment", 13: "chainLengthAdjustment", 14: "chainWeightAdjustment",
        15: "spanLengthAdjustment", 16: "sensorMeasurementContextTorque",
        17: "instantaneousMeasurementDirection", 18: "factoryCalibrationDate",
        19: "enhancedOffsetCompensation",
    ]

    /// The names of the set bits that ``bitNames`` defines, in bit order.
    public var supported: [String] {
        (0..<32).compactMap { bit in rawValue & (1 << UInt32(bit)) != 0 ? Self.bitNames[bit] : nil }
    }

    /// Bit 2: Cycling Power Measurement can carry wheel revolution data.
    public var wheelRevolutionDataSupported: Bool { rawValue & (1 << 2) != 0 }
    /// Bit 3: Cycling Power Measurement can carry crank revolution data.
    public var crankRevolutionDataSupported: Bool { rawValue & (1 << 3) != 0 }
    /// Bit 16: forces are measured as torque (true) or as force (false).
    public var measuresTorque: Bool { rawValue & (1 << 16) != 0 }
    /// Bits 20–21: 0 unspecified (legacy sensor), 1 not for use in a distributed system, 2 for use
    /// in a distributed system (each sensor reports only its own pedal), 3 reserved.
    public var distributedSystemSupport: Int { Int(rawValue >> 20 & 0x3) }
}

/// Decodes Cycling Power Feature values. Pure.
public enum CyclingPowerFeatureDecoder {
    /// - Throws: ``FitnessDecodingError`` `.truncated` below four bytes, `.unexpectedLength` above.
    public static func decode(_ payload: [UInt8]) throws(FitnessDecodingError) -> CyclingPowerFeature {
        var reader = PayloadReader(payload, .cyclingPowerFeature)
        let value = try reader.uint32("cyclingPowerFeature")
        try reader.expectEnd()
        return CyclingPowerFeature(rawValue: value)
    }
}
