public import GATTDecoding

/// The schedule of one observation type: the Observation Schedule descriptor (0x2910) of Health
/// Sensor Features, one per supported type, which the gateway reads and writes to set how
/// often the sensor measures and sends, and the Observation Schedule Changed characteristic
/// (0x2BF1), which the sensor indicates when a schedule changes.
///
/// Sent as observation type (uint32 MDC code), measurement period (FLOAT, seconds) and update
/// interval (FLOAT, seconds): twelve bytes.
public struct GHSObservationSchedule: Hashable, Sendable, CustomStringConvertible {
    /// The MDC code of the observation type the schedule is for.
    public var type: UInt32
    /// How often the sensor measures, in seconds.
    public var measurementPeriod: MedicalFloat
    /// How often the sensor sends, in seconds.
    public var updateInterval: MedicalFloat

    /// A schedule from its parts.
    public init(type: UInt32, measurementPeriod: MedicalFloat, updateInterval: MedicalFloat) {
        self.type = type
        self.measurementPeriod = measurementPeriod
        self.updateInterval = updateInterval
    }

    /// A schedule in seconds, for the gateway to write.
    public init(type: UInt32, measurementPeriodSeconds: Double, updateIntervalSeconds: Double) {
        self.init(type: type, measurementPeriod: .value(measurementPeriodSeconds), updateInterval: .value(updateIntervalSeconds))
    }

    /// For logs: `type 150456: measures every 1.0 s, sends every 1.0 s`.
    public var description: String {
        "type \(type): measures every \(measurementPeriod) s, sends every \(updateInterval) s"
    }

    /// The twelve bytes to write to the descriptor (numbers as ``MedicalFloat/floatBits``).
    public var encoded: [UInt8] {
        GHSEncoding.littleEndian(type) + measurementPeriod.floatBytes + updateInterval.floatBytes
    }

    /// Decodes the descriptor's value, or Observation Schedule Changed's with
    /// `characteristic: .observationScheduleChanged`.
    /// - Throws: `.truncated` below twelve bytes, `.unexpectedLength` above.
    public static func decode(
        _ bytes: [UInt8], characteristic: GHSCharacteristic = .observationSchedule
    ) throws(GHSDecodingError) -> GHSObservationSchedule {
        var reader = GATTPayloadReader(bytes, characteristic)
        let type = try reader.uint32("type")
        let period = try reader.float("measurementPeriodSeconds")
        let interval = try reader.float("updateIntervalSeconds")
        try reader.expectEnd()
        return GHSObservationSchedule(type: type, measurementPeriod: period, updateInterval: interval)
    }
}
