public import GATTDecoding

/// One Body Composition Measurement (0x2A9C) indication, decoded; or a record reassembled from
/// several (``BodyCompositionReassembler``).
///
/// Layout from the Body Composition Service v1.0 and the GATT Specification Supplement: flags
/// (uint16: bit 0 unit, 0 SI, 1 imperial; bit 1 time stamp; bit 2 user ID; bit 3 basal
/// metabolism; bit 4 muscle percentage; bit 5 muscle mass; bit 6 fat free mass; bit 7 soft lean
/// mass; bit 8 body water mass; bit 9 impedance; bit 10 weight; bit 11 height; bit 12 Multiple
/// Packet Measurement; bits 13–15 reserved), the body fat percentage (uint16, 0.1 %, 0xFFFF
/// "measurement unsuccessful"), then the fields in bit order: a Date Time, the user ID (uint8,
/// 0xFF "unknown user"), basal metabolism (uint16, kJ), muscle percentage (uint16, 0.1 %), the
/// four masses and the weight (uint16 each, 0.005 kg or 0.01 lb), impedance (uint16, 0.1 Ω) and
/// height (uint16, 0.001 m or 0.1 in).
public struct BodyCompositionMeasurement: Hashable, Sendable {
    /// The flags as sent (for a reassembled record: the union of its parts' flags).
    public var flags: UInt16
    /// True when the masses and height were sent in pounds and inches.
    public var imperial: Bool
    /// Percent; nil when the device reports an unsuccessful measurement.
    public var bodyFatPercentage: Double?
    public var timestamp: DeviceTimestamp?
    /// The user index; nil when absent or 0xFF (unknown user).
    public var userID: Int?
    /// Kilojoules.
    public var basalMetabolism: Int?
    /// Percent.
    public var musclePercentage: Double?
    /// Kilograms.
    public var muscleMass: Double?
    /// Kilograms.
    public var fatFreeMass: Double?
    /// Kilograms.
    public var softLeanMass: Double?
    /// Kilograms.
    public var bodyWaterMass: Double?
    /// Ohms.
    public var impedance: Double?
    /// Kilograms.
    public var weight: Double?
    /// Metres.
    public var height: Double?

    public init(flags: UInt16, imperial: Bool, bodyFatPercentage: Double?) {
        self.flags = flags
        self.imperial = imperial
        self.bodyFatPercentage = bodyFatPercentage
    }

    /// Whether the Multiple Packet Measurement flag is set: the record continues in another
    /// indication.
    public var isMultiplePacket: Bool { flags & BodyCompositionMeasurementDecoder.multiplePacket != 0 }
}

/// Decodes Body Composition Measurement payloads. Pure.
public enum BodyCompositionMeasurementDecoder {
    static let imperialUnits: UInt16 = 1 << 0
    static let timestampPresent: UInt16 = 1 << 1
    static let userIDPresent: UInt16 = 1 << 2
    static let basalMetabolismPresent: UInt16 = 1 << 3
    static let musclePercentagePresent: UInt16 = 1 << 4
    static let muscleMassPresent: UInt16 = 1 << 5
    static let fatFreeMassPresent: UInt16 = 1 << 6
    static let softLeanMassPresent: UInt16 = 1 << 7
    static let bodyWaterMassPresent: UInt16 = 1 << 8
    static let impedancePresent: UInt16 = 1 << 9
    static let weightPresent: UInt16 = 1 << 10
    static let heightPresent: UInt16 = 1 << 11
    static let multiplePacket: UInt16 = 1 << 12
    /// The bits of the fields after the time stamp and user ID (basal metabolism to height).
    static let measurementFieldBits: UInt16 = 0x0FF8

    /// Decodes one payload; bytes after the announced fields and the reserved flag bits are
    /// ignored.
    /// - Throws: ``HealthDecodingError`` `.truncated` naming the cut field.
    public static func decode(_ payload: [UInt8]) throws(HealthDecodingError) -> BodyCompositionMeasurement {
        var reader = HealthPayloadReader(payload, .bodyCompositionMeasurement)
        let flags = try reader.uint16("flags")
        let imperial = flags & imperialUnits != 0
        let fat = try reader.uint16("bodyFatPercentage")
        var m = BodyCompositionMeasurement(
            flags: flags, imperial: imperial, bodyFatPercentage: fat == 0xFFFF ? nil : Double(fat) / 10)
        // Mass resolution 0.005 kg or 0.01 lb: divide by 200 or 100 so that the value is exact.
        func mass(_ raw: UInt16) -> Double {
            imperial ? Double(raw) / 100 * WeightMeasurementDecoder.kilogramsPerPound : Double(raw) / 200
        }
        if flags & timestampPresent != 0 { m.timestamp = try reader.timestamp("timestamp") }
        if flags & userIDPresent != 0 {
            let user = try reader.uint8("userID")
            m.userID = user == 0xFF ? nil : Int(user)
        }
        if flags & basalMetabolismPresent != 0 { m.basalMetabolism = Int(try reader.uint16("basalMetabolism")) }
        if flags & musclePercentagePresent != 0 { m.musclePercentage = Double(try reader.uint16("musclePercentage")) / 10 }
        if flags & muscleMassPresent != 0 { m.muscleMass = mass(try reader.uint16("muscleMass")) }
        if flags & fatFreeMassPresent != 0 { m.fatFreeMass = mass(try reader.uint16("fatFreeMass")) }
        if flags & softLeanMassPresent != 0 { m.softLeanMass = mass(try reader.uint16("softLeanMass")) }
        if flags & bodyWaterMassPresent != 0 { m.bodyWaterMass = mass(try reader.uint16("bodyWaterMass")) }
        if flags & impedancePresent != 0 { m.impedance = Double(try reader.uint16("impedance")) / 10 }
        if flags & weightPresent != 0 { m.weight = mass(try reader.uint16("weight")) }
        if flags & heightPresent != 0 {
            let raw = try reader.uint16("height")
            m.height = imperial ? Double(raw) / 10 * WeightMeasurementDecoder.metersPerInch : Double(raw) / 1000
        }
        return m
    }
}
