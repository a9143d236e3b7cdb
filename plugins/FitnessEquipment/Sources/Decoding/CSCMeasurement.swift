public import GATTDecoding
/// One CSC Measurement (0x2A5B) notification from a bike speed and/or cadence sensor, decoded.
///
/// Layout from the Cycling Speed and Cadence Service v1.0 (CSC Measurement) and the GATT Specification
/// Supplement (CSC Measurement): a flags octet (bit 0 wheel revolution data present, bit 1 crank
/// revolution data present), then Cumulative Wheel Revolutions (uint32) and Last Wheel Event Time
/// (uint16, 1/1024 s), then Cumulative Crank Revolutions (uint16) and Last Crank Event Time
/// (uint16, 1/1024 s). Every counter wraps; ``RevolutionRateCalculator`` turns two of them into rates.
public struct CSCMeasurement: Hashable, Sendable {
    /// The flags octet as sent.
    public var flags: UInt8
    /// Wheel revolutions and the time of the last one; nil when flags bit 0 is clear.
    public var wheel: RevolutionData?
    /// Crank revolutions and the time of the last one; nil when flags bit 1 is clear.
    public var crank: RevolutionData?

    /// Creates a measurement from decoded values.
    public init(flags: UInt8, wheel: RevolutionData?, crank: RevolutionData?) {
        self.flags = flags
        self.wheel = wheel
        self.crank = crank
    }

    /// Cumulative wheel revolutions (wraps at 2^32).
    public var cumulativeWheelRevolutions: UInt32? { wheel?.cumulativeRevolutions }
    /// Last wheel event time in seconds (wraps at 64 s).
    public var lastWheelEventTime: Double? { wheel?.lastEventTimeSeconds }
    /// Cumulative crank revolutions (wraps at 2^16).
    public var cumulativeCrankRevolutions: UInt32? { crank?.cumulativeRevolutions }
    /// Last crank event time in seconds (wraps at 64 s).
    public var lastCrankEventTime: Double? { crank?.lastEventTimeSeconds }
}

/// Decodes CSC Measurement payloads. Pure: no I/O, no clock.
public enum CSCMeasurementDecoder {
    /// Flags bits (CSCS v1.0, CSC Measurement flags).
    static let wheelPresent: UInt8 = 0x01
    static let crankPresent: UInt8 = 0x02

    /// Decodes one payload. Bytes after the announced fields are ignored (the flags' reserved
    /// bits 2–7 may announce fields of a later revision).
    /// - Throws: ``FitnessDecodingError`` `.truncated` naming the cut field.
    public static func decode(_ payload: [UInt8]) throws(FitnessDecodingError) -> CSCMeasurement {
        var reader = PayloadReader(payload, .cscMeasurement)
        let flags = try reader.uint8("flags")
        var wheel: RevolutionData?
        if flags & wheelPresent != 0 {
            let revolutions = try reader.uint32("cumulativeWheelRevolutions")
            let time = try reader.uint16("lastWheelEventTime")
            wheel = RevolutionData(
                cumulativeRevolutions: revolutions, lastEventTime: time, counter: .cscWheel)
        }
        var crank: RevolutionData?
        if flags & crankPresent != 0 {
            let revolutions = try reader.uint16("cumulativeCrankRevolutions")
            let time = try reader.uint16("lastCrankEventTime")
            crank = RevolutionData(
                cumulativeRevolutions: UInt32(revolutions), lastEventTime: time, counter: .crank)
        }
        return CSCMeasurement(flags: flags, wheel: wheel, crank: crank)
    }
}
