public import GATTDecoding
/// One Cycling Power Measurement (0x2A63) notification, decoded.
///
/// Layout from the Cycling Power Service v1.1 (Cycling Power Measurement) and the GATT Specification Supplement
/// (Cycling Power Measurement): flags (uint16), Instantaneous Power (sint16, W), then in this
/// order, each when its flag is set: Pedal Power Balance (uint8, 1/2 %; bit 0, and bit 1 says
/// whether it refers to the left pedal), Accumulated Torque (uint16, 1/32 N·m; bit 2, and bit 3
/// says whether its source is the crank), Wheel Revolution Data (uint32 + uint16 in 1/2048 s;
/// bit 4), Crank Revolution Data (uint16 + uint16 in 1/1024 s; bit 5), Extreme Force Magnitudes
/// (two sint16, N; bit 6), Extreme Torque Magnitudes (two sint16, 1/32 N·m; bit 7), Extreme
/// Angles (two 12-bit angles in three octets, degrees; bit 8), Top Dead Spot Angle (uint16,
/// degrees; bit 9), Bottom Dead Spot Angle (uint16, degrees; bit 10), Accumulated Energy (uint16,
/// kJ; bit 11). Bit 12 (Offset Compensation Indicator) carries no field.
public struct CyclingPowerMeasurement: Hashable, Sendable {
    /// Which pedal the balance refers to (flags bit 1).
    public enum PedalPowerBalanceReference: String, Hashable, Sendable {
        /// Bit 1 clear: the sensor does not say.
        case unknown
        /// Bit 1 set: the percentage is the left pedal's share.
        case left
    }

    /// Where the accumulated torque is measured (flags bit 3).
    public enum AccumulatedTorqueSource: String, Hashable, Sendable {
        /// Bit 3 clear.
        case wheelBased
        /// Bit 3 set.
        case crankBased
    }

    /// The flags as sent.
    public var flags: UInt16
    /// Instantaneous power in watts (negative when the rider brakes a trainer).
    public var instantaneousPower: Int
    /// Pedal power balance in the raw unit, 1/2 %.
    public var pedalPowerBalanceRaw: UInt8?
    /// Flags bit 1.
    public var pedalPowerBalanceReference: PedalPowerBalanceReference
    /// Accumulated torque in the raw unit, 1/32 N·m (wraps at 2^16).
    public var accumulatedTorqueRaw: UInt16?
    /// Flags bit 3.
    public var accumulatedTorqueSource: AccumulatedTorqueSource
    /// Wheel revolutions with event times in 1/2048 s.
    public var wheel: RevolutionData?
    /// Crank revolutions with event times in 1/1024 s.
    public var crank: RevolutionData?
    /// Maximum and minimum force magnitudes in newtons.
    public var extremeForceMagnitudes: Extremes?
    /// Maximum and minimum torque magnitudes in the raw unit, 1/32 N·m.
    public var extremeTorqueMagnitudesRaw: Extremes?
    /// Maximum and minimum crank angles in degrees (12 bits each, 0–4095).
    public var extremeAngles: Extremes?
    /// Top dead spot angle in degrees.
    public var topDeadSpotAngle: Int?
    /// Bottom dead spot angle in degrees.
    public var bottomDeadSpotAngle: Int?
    /// Accumulated energy in kJ (wraps at 2^16).
    public var accumulatedEnergy: Int?

    /// Creates a measurement with power only; set the other fields as needed.
    public init(flags: UInt16, instantaneousPower: Int) {
        self.flags = flags
        self.instantaneousPower = instantaneousPower
        self.pedalPowerBalanceReference = flags & 0x0002 != 0 ? .left : .unknown
        self.accumulatedTorqueSource = flags & 0x0008 != 0 ? .crankBased : .wheelBased
    }

    /// Pedal power balance in percent.
    public var pedalPowerBalance: Double? { pedalPowerBalanceRaw.map { Double($0) / 2 } }
    /// Accumulated torque in N·m.
    public var accumulatedTorque: Double? { accumulatedTorqueRaw.map { Double($0) / 32 } }
    /// Cumulative wheel revolutions (wraps at 2^32).
    public var cumulativeWheelRevolutions: UInt32? { wheel?.cumulativeRevolutions }
    /// Last wheel event time in seconds (1/2048 s resolution; wraps at 32 s).
    public var lastWheelEventTime: Double? { wheel?.lastEventTimeSeconds }
    /// Cumulative crank revolutions (wraps at 2^16).
    public var cumulativeCrankRevolutions: UInt32? { crank?.cumulativeRevolutions }
    /// Last crank event time in seconds (wraps at 64 s).
    public var lastCrankEventTime: Double? { crank?.lastEventTimeSeconds }
    /// Flags bit 12: the sensor's offset compensation is running and the values may be wrong.
    public var offsetCompensationIndicator: Bool { flags & 0x1000 != 0 }
}

/// Decodes Cycling Power Measurement payloads. Pure: no I/O, no clock.
public enum CyclingPowerMeasurementDecoder {
    /// Decodes one payload. Bytes after the announced fields are ignored (reserved flag bits
    /// 13–15 may announce fields of a later revision).
    /// - Throws: ``FitnessDecodingError`` `.truncated` naming the cut field.
    public static func decode(_ payload: [UInt8]) throws(FitnessDecodingError) -> CyclingPowerMeasurement {
        var reader = PayloadReader(payload, .cyclingPowerMeasurement)
        let flags = try reader.uint16("flags")
        var m = CyclingPowerMeasurement(
            flags: flags, instantaneousPower: Int(try reader.sint16("instantaneousPower")))
        func has(_ bit: Int) -> Bool { flags & (1 << UInt16(bit)) != 0 }
        if has(0) { m.pedalPowerBalanceRaw = try reader.uint8("pedalPowerBalance") }
        if has(2) { m.accumulatedTorqueRaw = try reader.uint16("accumulatedTorque") }
        if has(4) {
            let revolutions = try reader.uint32("cumulativeWheelRevolutions")
            let time = try reader.uint16("lastWheelEventTime")
            m.wheel = RevolutionData(
                cumulativeRevolutions: revolutions, lastEventTime: time, counter: .cyclingPowerWheel)
        }
        if has(5) {
            let revolutions = try reader.uint16("cumulativeCrankRevolutions")
            let time = try reader.uint16("lastCrankEventTime")
            m.crank = RevolutionData(cumulativeRevolutions: UInt32(revolutions), lastEventTime: time, counter: .crank)
        }
        if has(6) {
            let maximum = Int(try reader.sint16("maximumForceMagnitude"))
            let minimum = Int(try reader.sint16("minimumForceMagnitude"))
            m.extremeForceMagnitudes = Extremes(maximum: maximum, minimum: minimum)
        }
        if has(7) {
            let maximum = Int(try reader.sint16("maximumTorqueMagnitude"))
            let minimum = Int(try reader.sint16("minimumTorqueMagnitude"))
            m.extremeTorqueMagnitudesRaw = Extremes(maximum: maximum, minimum: minimum)
        }
        if has(8) {
            // Two uint12 in three octets, maximum angle in the low 12 bits (CPS v1.1, Extreme Angles field).
            let packed = try reader.unsigned(3, "extremeAngles")
            m.extremeAngles = Extremes(maximum: Int(packed & 0x0FFF), minimum: Int(packed >> 12))
        }
        if has(9) { m.topDeadSpotAngle = Int(try reader.uint16("topDeadSpotAngle")) }
        if has(10) { m.bottomDeadSpotAngle = Int(try reader.uint16("bottomDeadSpotAngle")) }
        if has(11) { m.accumulatedEnergy = Int(try reader.uint16("accumulatedEnergy")) }
        return m
    }
}
