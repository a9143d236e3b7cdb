public import GATTDecoding

/// The Valid Range and Accuracy descriptor (0x2911) of Health Sensor Features, one per supported
/// observation type: the range the sensor's values fall in and how accurate they are.
///
/// Sent as observation type (uint32 MDC code), unit (uint16 MDC unit code), lower limit, upper
/// limit and accuracy (each a FLOAT in that unit): eighteen bytes.
public struct GHSValidRangeAndAccuracy: Hashable, Sendable {
    /// The MDC code of the observation type.
    public var type: UInt32
    /// The MDC unit code of the limits and the accuracy.
    public var unit: UInt16
    /// The lowest value the sensor reports.
    public var lowerLimit: MedicalFloat
    /// The highest value the sensor reports.
    public var upperLimit: MedicalFloat
    /// The accuracy, in the unit.
    public var accuracy: MedicalFloat

    /// A descriptor value from its parts.
    public init(type: UInt32, unit: UInt16, lowerLimit: MedicalFloat, upperLimit: MedicalFloat, accuracy: MedicalFloat) {
        self.type = type
        self.unit = unit
        self.lowerLimit = lowerLimit
        self.upperLimit = upperLimit
        self.accuracy = accuracy
    }

    /// Decodes the descriptor's value.
    /// - Throws: `.truncated` below eighteen bytes, `.unexpectedLength` above.
    public static func decode(_ bytes: [UInt8]) throws(GHSDecodingError) -> GHSValidRangeAndAccuracy {
        var reader = GATTPayloadReader(bytes, GHSCharacteristic.validRangeAndAccuracy)
        let type = try reader.uint32("type")
        let unit = try reader.uint16("unit")
        let lower = try reader.float("lowerLimit")
        let upper = try reader.float("upperLimit")
        let accuracy = try reader.float("accuracy")
        try reader.expectEnd()
        return GHSValidRangeAndAccuracy(type: type, unit: unit, lowerLimit: lower, upperLimit: upper, accuracy: accuracy)
    }
}
