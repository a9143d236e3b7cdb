/// Treadmill Data (0x2ACD) with its fields in SI units.
public struct TreadmillData: Hashable, Sendable {
    /// The decoded fields.
    public var data: FitnessMachineData

    /// Wraps decoded fields.
    public init(_ data: FitnessMachineData) { self.data = data }

    /// Decodes one notification; see ``FitnessMachineDataDecoder/decode(_:layout:)``.
    public static func decode(_ payload: [UInt8]) throws(FitnessDecodingError) -> TreadmillData {
        TreadmillData(try FitnessMachineDataDecoder.decode(payload, layout: .treadmill))
    }

    /// Belt speed in m/s (sent in 0.01 km/h).
    public var instantaneousSpeed: Double? { data.raw[.instantaneousSpeed].map(FitnessUnits.speed) }
    /// Average speed in m/s.
    public var averageSpeed: Double? { data.raw[.averageSpeed].map(FitnessUnits.speed) }
    /// Total distance in metres (uint24).
    public var totalDistance: Double? { data.raw[.totalDistance].map(Double.init) }
    /// Inclination in percent (sent in 0.1 %).
    public var inclination: Double? { data.raw[.inclination].map(FitnessUnits.tenths) }
    /// Ramp angle setting in degrees (sent in 0.1°).
    public var rampAngleSetting: Double? { data.raw[.rampAngleSetting].map(FitnessUnits.tenths) }
    /// Positive elevation gain in metres (sent in 0.1 m).
    public var positiveElevationGain: Double? { data.raw[.positiveElevationGain].map(FitnessUnits.tenths) }
    /// Negative elevation gain in metres (sent in 0.1 m).
    public var negativeElevationGain: Double? { data.raw[.negativeElevationGain].map(FitnessUnits.tenths) }
    /// Instantaneous pace in km/min (sent in 0.1 km/min, FTMS v1.0).
    public var instantaneousPace: Double? { data.raw[.instantaneousPace].map(FitnessUnits.tenths) }
    /// Average pace in km/min (sent in 0.1 km/min, FTMS v1.0).
    public var averagePace: Double? { data.raw[.averagePace].map(FitnessUnits.tenths) }
    /// Power output in W.
    public var powerOutput: Double? { data.raw[.powerOutput].map(Double.init) }
    /// Force on belt in N.
    public var forceOnBelt: Double? { data.raw[.forceOnBelt].map(Double.init) }
    /// Total energy in kcal.
    public var totalEnergy: Double? { data.raw[.totalEnergy].map(Double.init) }
    /// Energy per hour in kcal/h.
    public var energyPerHour: Double? { data.raw[.energyPerHour].map(Double.init) }
    /// Energy per minute in kcal/min.
    public var energyPerMinute: Double? { data.raw[.energyPerMinute].map(Double.init) }
    /// Heart rate in beats per minute.
    public var heartRate: Double? { data.raw[.heartRate].map(Double.init) }
    /// Metabolic equivalent (sent in 0.1).
    public var metabolicEquivalent: Double? { data.raw[.metabolicEquivalent].map(FitnessUnits.tenths) }
    /// Elapsed time in seconds.
    public var elapsedTime: Double? { data.raw[.elapsedTime].map(Double.init) }
    /// Remaining time in seconds.
    public var remainingTime: Double? { data.raw[.remainingTime].map(Double.init) }
}
