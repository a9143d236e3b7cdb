public import GATTDecoding

/// One Weight Measurement (0x2A9D) indication, decoded.
///
/// Layout from the Weight Scale Service v1.0 and the GATT Specification Supplement: a flags
/// octet (bit 0 unit: 0 SI, 1 imperial; bit 1 time stamp; bit 2 user ID; bit 3 BMI and height),
/// the weight (uint16; 0.005 kg or 0.01 lb; 0xFFFF "measurement unsuccessful"), a Date Time, the
/// user ID (uint8, 0xFF "unknown user"), BMI (uint16, 0.1 kg/m²) and height (uint16; 0.001 m or
/// 0.1 in).
public struct WeightMeasurement: Hashable, Sendable {
    public var flags: UInt8
    /// True when the weight and height were sent in pounds and inches.
    public var imperial: Bool
    /// The weight in kilograms; nil when the scale reports an unsuccessful measurement.
    public var weight: Double?
    public var timestamp: DeviceTimestamp?
    /// The user index; nil when absent or 0xFF (unknown user).
    public var userID: Int?
    /// kg/m²; nil when absent.
    public var bmi: Double?
    /// Metres; nil when absent.
    public var height: Double?

    public init(
        flags: UInt8, imperial: Bool, weight: Double?, timestamp: DeviceTimestamp?, userID: Int?, bmi: Double?,
        height: Double?
    ) {
        self.flags = flags
        self.imperial = imperial
        self.weight = weight
        self.timestamp = timestamp
        self.userID = userID
        self.bmi = bmi
        self.height = height
    }
}

/// Decodes Weight Measurement payloads. Pure.
public enum WeightMeasurementDecoder {
    static let imperialUnits: UInt8 = 0x01
    static let timestampPresent: UInt8 = 0x02
    static let userIDPresent: UInt8 = 0x04
    static let bmiAndHeightPresent: UInt8 = 0x08
    /// The international avoirdupois pound and inch.
    static let kilogramsPerPound = 0.45359237
    static let metersPerInch = 0.0254

    /// Decodes one payload; bytes after the announced fields are ignored.
    /// - Throws: ``HealthDecodingError`` `.truncated` naming the cut field.
    public static func decode(_ payload: [UInt8]) throws(HealthDecodingError) -> WeightMeasurement {
        var reader = HealthPayloadReader(payload, .weightMeasurement)
        let flags = try reader.uint8("flags")
        let imperial = flags & imperialUnits != 0
        let raw = try reader.uint16("weight")
        // Resolution 0.005 kg or 0.01 lb: divide by 200 or 100 so that the value is exact.
        let weight: Double? = raw == 0xFFFF ? nil : imperial ? Double(raw) / 100 * kilogramsPerPound : Double(raw) / 200
        let timestamp = flags & timestampPresent != 0 ? try reader.timestamp("timestamp") : nil
        var userID: Int?
        if flags & userIDPresent != 0 {
            let user = try reader.uint8("userID")
            userID = user == 0xFF ? nil : Int(user)
        }
        var bmi: Double?
        var height: Double?
        if flags & bmiAndHeightPresent != 0 {
            bmi = Double(try reader.uint16("bmi")) / 10
            let rawHeight = try reader.uint16("height")
            height = imperial ? Double(rawHeight) / 10 * metersPerInch : Double(rawHeight) / 1000
        }
        return WeightMeasurement(
            flags: flags, imperial: imperial, weight: weight, timestamp: timestamp, userID: userID, bmi: bmi,
            height: height)
    }
}
