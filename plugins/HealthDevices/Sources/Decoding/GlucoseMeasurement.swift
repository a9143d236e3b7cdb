public import GATTDecoding
import HealthModel

/// One Glucose Measurement (0x2A18) notification, decoded.
///
/// Layout from the Glucose Service v1.0 and the GATT Specification Supplement: a flags octet
/// (bit 0 time offset; bit 1 concentration, type and sample location; bit 2 unit: 0 kg/L, 1
/// mol/L; bit 3 sensor status annunciation; bit 4 context information follows), the sequence
/// number (uint16), the base time (Date Time), the time offset (sint16, minutes), the
/// concentration (SFLOAT), type and sample location (one octet: type in the low nibble, location
/// in the high nibble) and the sensor status annunciation (uint16).
public struct GlucoseMeasurement: Hashable, Sendable {
    public enum ConcentrationUnit: String, Hashable, Sendable {
        case kilogramPerLiter = "kg/L"
        case molePerLiter = "mol/L"
    }

    public var flags: UInt8
    public var sequenceNumber: Int
    public var baseTime: DeviceTimestamp
    /// Minutes to add to the base time; nil when absent.
    public var timeOffset: Int?
    public var unit: ConcentrationUnit
    /// As sent, in ``unit``; nil when absent.
    public var concentration: MedicalFloat?
    public var typeCode: UInt8?
    public var sampleLocationCode: UInt8?
    public var sensorStatus: UInt16?
    /// Whether a Glucose Measurement Context with the same sequence number follows.
    public var contextFollows: Bool

    public init(
        flags: UInt8, sequenceNumber: Int, baseTime: DeviceTimestamp, timeOffset: Int?, unit: ConcentrationUnit,
        concentration: MedicalFloat?, typeCode: UInt8?, sampleLocationCode: UInt8?, sensorStatus: UInt16?,
        contextFollows: Bool
    ) {
        self.flags = flags
        self.sequenceNumber = sequenceNumber
        self.baseTime = baseTime
        self.timeOffset = timeOffset
        self.unit = unit
        self.concentration = concentration
        self.typeCode = typeCode
        self.sampleLocationCode = sampleLocationCode
        self.sensorStatus = sensorStatus
        self.contextFollows = contextFollows
    }

    /// The measurement time: the base time plus the offset.
    public var timestamp: DeviceTimestamp { baseTime.adding(minutes: timeOffset ?? 0) }

    /// Glucose's molar mass, g/mol (HealthKit's HKUnitMolarMassBloodGlucose).
    public static let glucoseMolarMass = 180.15588000005408

    /// The concentration in mg/dL (1 kg/L is 10^5 mg/dL; 1 mol/L is 100 × the molar mass in
    /// mg/dL); nil when absent or a special value.
    public var milligramsPerDeciliter: Double? {
        guard let number = concentration?.number else { return nil }
        switch unit {
        case .kilogramPerLiter: return (number * 100_000).withoutConversionNoise
        case .molePerLiter: return (number * Self.glucoseMolarMass * 100).withoutConversionNoise
        }
    }

    /// The Type field's name (Glucose Service: 1 capillary whole blood … 10 control solution);
    /// nil when absent or reserved.
    public var type: String? {
        guard let code = typeCode, (1...10).contains(code) else { return nil }
        return [
            "capillaryWholeBlood", "capillaryPlasma", "venousWholeBlood", "venousPlasma", "arterialWholeBlood",
            "arterialPlasma", "undeterminedWholeBlood", "undeterminedPlasma", "interstitialFluid", "controlSolution",
        ][Int(code) - 1]
    }

    /// The Sample Location's name (1 finger, 2 alternate site test, 3 earlobe, 4 control
    /// solution, 15 not available); nil when absent or reserved.
    public var sampleLocation: String? {
        switch sampleLocationCode {
        case 1: "finger"
        case 2: "alternateSiteTest"
        case 3: "earlobe"
        case 4: "controlSolution"
        case 15: "notAvailable"
        default: nil
        }
    }
}

/// Decodes Glucose Measurement payloads. Pure.
public enum GlucoseMeasurementDecoder {
    static let timeOffsetPresent: UInt8 = 0x01
    static let concentrationPresent: UInt8 = 0x02
    static let molePerLiter: UInt8 = 0x04
    static let statusPresent: UInt8 = 0x08
    static let contextFollows: UInt8 = 0x10

    /// Decodes one payload; bytes after the announced fields are ignored.
    /// - Throws: ``HealthDecodingError`` `.truncated` naming the cut field.
    public static func decode(_ payload: [UInt8]) throws(HealthDecodingError) -> GlucoseMeasurement {
        var reader = HealthPayloadReader(payload, .glucoseMeasurement)
        let flags = try reader.uint8("flags")
        let sequence = Int(try reader.uint16("sequenceNumber"))
        let base = try reader.timestamp("baseTime")
        let offset = flags & timeOffsetPresent != 0 ? Int(try reader.sint16("timeOffset")) : nil
        var concentration: MedicalFloat?
        var typeCode: UInt8?
        var location: UInt8?
        if flags & concentrationPresent != 0 {
            concentration = try reader.sfloat("concentration")
            let typeAndLocation = try reader.uint8("typeAndSampleLocation")
            typeCode = typeAndLocation & 0x0F
            location = typeAndLocation >> 4
        }
        let status = flags & statusPresent != 0 ? try reader.uint16("sensorStatus") : nil
        return GlucoseMeasurement(
            flags: flags, sequenceNumber: sequence, baseTime: base, timeOffset: offset,
            unit: flags & molePerLiter != 0 ? .molePerLiter : .kilogramPerLiter, concentration: concentration,
            typeCode: typeCode, sampleLocationCode: location, sensorStatus: status,
            contextFollows: flags & contextFollows != 0)
    }
}
