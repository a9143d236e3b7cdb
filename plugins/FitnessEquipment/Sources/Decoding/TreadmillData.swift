/// Treadmill Data (0x2ACD) with its fields in SI units.
public struct TreadmillData: FitnessMachineRecord {
    /// The Treadmill Data layout.
    public static var layout: FitnessMachineLayout { .treadmill }
    /// The decoded fields.
    public var data: FitnessMachineData

    /// Wraps decoded fields.
    public init(_ data: FitnessMachineData) { self.data = data }

    /// Belt speed in m/s (sent in 0.01 km/h).
    public var instantaneousSpeed: Double? { data.raw[.instantaneousSpeed].map(FitnessUnits.speed) }
    /// Average speed in m/s.
    public var averageSpeed: Double? { data.raw[.averageSpeed].map(FitnessUnits.speed) }
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
}
