public import GATTDecoding

/// One Blood Pressure Measurement (0x2A35) or Intermediate Cuff Pressure (0x2A36) indication,
/// decoded.
///
/// Layout from the Blood Pressure Service v1.1 and the GATT Specification Supplement: a flags
/// octet (bit 0 unit: 0 mmHg, 1 kPa; bit 1 time stamp; bit 2 pulse rate; bit 3 user ID; bit 4
/// measurement status), then systolic, diastolic and mean arterial pressure (three SFLOATs), a
/// Date Time, the pulse rate (SFLOAT, beats per minute), the user ID (uint8, 0xFF "unknown user")
/// and the measurement status (uint16). Intermediate Cuff Pressure has the same layout, with the
/// current cuff pressure in the systolic field and the other two NaN.
public struct BloodPressureMeasurement: Hashable, Sendable {
    /// The unit the pressures were sent in.
    public enum PressureUnit: String, Hashable, Sendable { case mmHg, kPa }

    public var flags: UInt8
    public var unit: PressureUnit
    /// As sent, in ``unit``.
    public var systolic: MedicalFloat
    public var diastolic: MedicalFloat
    public var meanArterialPressure: MedicalFloat
    public var timestamp: DeviceTimestamp?
    /// Beats per minute.
    public var pulseRate: MedicalFloat?
    /// The user index; nil when absent or 0xFF (unknown user).
    public var userID: Int?
    /// The Measurement Status bits as sent (bit 0 body movement, 1 cuff fit, 2 irregular pulse,
    /// 3-4 pulse rate range, 5 measurement position).
    public var measurementStatus: UInt16?

    public init(
        flags: UInt8, unit: PressureUnit, systolic: MedicalFloat, diastolic: MedicalFloat,
        meanArterialPressure: MedicalFloat, timestamp: DeviceTimestamp?, pulseRate: MedicalFloat?, userID: Int?,
        measurementStatus: UInt16?
    ) {
        self.flags = flags
        self.unit = unit
        self.systolic = systolic
        self.diastolic = diastolic
        self.meanArterialPressure = meanArterialPressure
        self.timestamp = timestamp
        self.pulseRate = pulseRate
        self.userID = userID
        self.measurementStatus = measurementStatus
    }

    /// 1 kPa in mmHg (1000 Pa / 133.322387415 Pa).
    public static let millimetersOfMercuryPerKilopascal = 1000 / 133.322387415

    /// A pressure in mmHg, converted from kPa when sent so; nil for a special value.
    public func millimetersOfMercury(_ value: MedicalFloat) -> Double? {
        guard let number = value.number else { return nil }
        return unit == .kPa ? number * Self.millimetersOfMercuryPerKilopascal : number
    }
}

/// Decodes Blood Pressure Measurement and Intermediate Cuff Pressure payloads. Pure.
public enum BloodPressureMeasurementDecoder {
    static let kilopascal: UInt8 = 0x01
    static let timestampPresent: UInt8 = 0x02
    static let pulseRatePresent: UInt8 = 0x04
    static let userIDPresent: UInt8 = 0x08
    static let statusPresent: UInt8 = 0x10

    /// Decodes one payload of `characteristic` (``HealthCharacteristic/bloodPressureMeasurement``
    /// or ``HealthCharacteristic/intermediateCuffPressure``). Bytes after the announced fields
    /// are ignored (reserved flag bits may announce fields of a later revision).
    /// - Throws: ``HealthDecodingError`` `.truncated` naming the cut field.
    public static func decode(
        _ payload: [UInt8], as characteristic: HealthCharacteristic = .bloodPressureMeasurement
    ) throws(HealthDecodingError) -> BloodPressureMeasurement {
        var reader = HealthPayloadReader(payload, characteristic)
        let flags = try reader.uint8("flags")
        let first = characteristic == .intermediateCuffPressure ? "cuffPressure" : "systolic"
        let systolic = try reader.sfloat(first)
        let diastolic = try reader.sfloat("diastolic")
        let mean = try reader.sfloat("meanArterialPressure")
        let timestamp = flags & timestampPresent != 0 ? try reader.timestamp("timestamp") : nil
        let pulse = flags & pulseRatePresent != 0 ? try reader.sfloat("pulseRate") : nil
        var userID: Int?
        if flags & userIDPresent != 0 {
            let user = try reader.uint8("userID")
            userID = user == 0xFF ? nil : Int(user)
        }
        let status = flags & statusPresent != 0 ? try reader.uint16("measurementStatus") : nil
        return BloodPressureMeasurement(
            flags: flags, unit: flags & kilopascal != 0 ? .kPa : .mmHg, systolic: systolic, diastolic: diastolic,
            meanArterialPressure: mean, timestamp: timestamp, pulseRate: pulse, userID: userID,
            measurementStatus: status)
    }
}
