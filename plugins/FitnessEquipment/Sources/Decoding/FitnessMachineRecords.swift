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
    /// Power output in W.
    public var powerOutput: Double? { data.raw[.powerOutput].map(Double.init) }
    /// Force on belt in N.
    public var forceOnBelt: Double? { data.raw[.forceOnBelt].map(Double.init) }
    /// Total energy in kcal.
    public var totalEnergy: Double? { data.raw[.totalEnergy].map(Double.init) }
    /// Heart rate in beats per minute.
    public var heartRate: Double? { data.raw[.heartRate].map(Double.init) }
    /// Metabolic equivalent (sent in 0.1).
    public var metabolicEquivalent: Double? { data.raw[.metabolicEquivalent].map(FitnessUnits.tenths) }
    /// Elapsed time in seconds.
    public var elapsedTime: Double? { data.raw[.elapsedTime].map(Double.init) }
    /// Remaining time in seconds.
    public var remainingTime: Double? { data.raw[.remainingTime].map(Double.init) }
}

/// Indoor Bike Data (0x2AD2) with its fields in SI units.
public struct IndoorBikeData: Hashable, Sendable {
    /// The decoded fields.
    public var data: FitnessMachineData

    /// Wraps decoded fields.
    public init(_ data: FitnessMachineData) { self.data = data }

    /// Decodes one notification; see ``FitnessMachineDataDecoder/decode(_:layout:)``.
    public static func decode(_ payload: [UInt8]) throws(FitnessDecodingError) -> IndoorBikeData {
        IndoorBikeData(try FitnessMachineDataDecoder.decode(payload, layout: .indoorBike))
    }

    /// Speed in m/s (sent in 0.01 km/h).
    public var instantaneousSpeed: Double? { data.raw[.instantaneousSpeed].map(FitnessUnits.speed) }
    /// Average speed in m/s.
    public var averageSpeed: Double? { data.raw[.averageSpeed].map(FitnessUnits.speed) }
    /// Cadence in revolutions per minute (sent in 0.5 /min).
    public var instantaneousCadence: Double? { data.raw[.instantaneousCadence].map(FitnessUnits.halves) }
    /// Average cadence in revolutions per minute.
    public var averageCadence: Double? { data.raw[.averageCadence].map(FitnessUnits.halves) }
    /// Total distance in metres (uint24).
    public var totalDistance: Double? { data.raw[.totalDistance].map(Double.init) }
    /// Resistance level, unitless (sint16, FTMS v1.0).
    public var resistanceLevel: Double? { data.raw[.resistanceLevel].map(Double.init) }
    /// Power in W (sint16).
    public var instantaneousPower: Double? { data.raw[.instantaneousPower].map(Double.init) }
    /// Average power in W.
    public var averagePower: Double? { data.raw[.averagePower].map(Double.init) }
    /// Total energy in kcal.
    public var totalEnergy: Double? { data.raw[.totalEnergy].map(Double.init) }
    /// Heart rate in beats per minute.
    public var heartRate: Double? { data.raw[.heartRate].map(Double.init) }
    /// Metabolic equivalent (sent in 0.1).
    public var metabolicEquivalent: Double? { data.raw[.metabolicEquivalent].map(FitnessUnits.tenths) }
    /// Elapsed time in seconds.
    public var elapsedTime: Double? { data.raw[.elapsedTime].map(Double.init) }
    /// Remaining time in seconds.
    public var remainingTime: Double? { data.raw[.remainingTime].map(Double.init) }
}

/// Rower Data (0x2AD1) with its fields in SI units.
public struct RowerData: Hashable, Sendable {
    /// The decoded fields.
    public var data: FitnessMachineData

    /// Wraps decoded fields.
    public init(_ data: FitnessMachineData) { self.data = data }

    /// Decodes one notification; see ``FitnessMachineDataDecoder/decode(_:layout:)``.
    public static func decode(_ payload: [UInt8]) throws(FitnessDecodingError) -> RowerData {
        RowerData(try FitnessMachineDataDecoder.decode(payload, layout: .rower))
    }

    /// Strokes per minute (sent in 0.5 /min).
    public var strokeRate: Double? { data.raw[.strokeRate].map(FitnessUnits.halves) }
    /// Strokes since the start.
    public var strokeCount: Int? { data.raw[.strokeCount] }
    /// Average strokes per minute.
    public var averageStrokeRate: Double? { data.raw[.averageStrokeRate].map(FitnessUnits.halves) }
    /// Total distance in metres (uint24).
    public var totalDistance: Double? { data.raw[.totalDistance].map(Double.init) }
    /// Time per 500 m in seconds.
    public var instantaneousPace: Double? { data.raw[.instantaneousPace].map(Double.init) }
    /// Average time per 500 m in seconds.
    public var averagePace: Double? { data.raw[.averagePace].map(Double.init) }
    /// Boat speed in m/s, from the instantaneous pace (500 m per pace); nil when the pace is
    /// absent or 0 (a rower that is not moving sends 0 or its maximum, 0xFFFF).
    public var instantaneousSpeed: Double? {
        guard let pace = data.raw[.instantaneousPace], pace > 0, pace < 0xFFFF else { return nil }
        return 500 / Double(pace)
    }
    /// Power in W (sint16).
    public var instantaneousPower: Double? { data.raw[.instantaneousPower].map(Double.init) }
    /// Average power in W.
    public var averagePower: Double? { data.raw[.averagePower].map(Double.init) }
    /// Resistance level, unitless (sint16, FTMS v1.0).
    public var resistanceLevel: Double? { data.raw[.resistanceLevel].map(Double.init) }
    /// Total energy in kcal.
    public var totalEnergy: Double? { data.raw[.totalEnergy].map(Double.init) }
    /// Heart rate in beats per minute.
    public var heartRate: Double? { data.raw[.heartRate].map(Double.init) }
    /// Metabolic equivalent (sent in 0.1).
    public var metabolicEquivalent: Double? { data.raw[.metabolicEquivalent].map(FitnessUnits.tenths) }
    /// Elapsed time in seconds.
    public var elapsedTime: Double? { data.raw[.elapsedTime].map(Double.init) }
    /// Remaining time in seconds.
    public var remainingTime: Double? { data.raw[.remainingTime].map(Double.init) }
}

/// Conversions from the FTMS resolutions to SI.
enum FitnessUnits {
    /// 0.01 km/h → m/s.
    static func speed(_ raw: Int) -> Double { Double(raw) / 360 }
    /// 0.1 of a unit.
    static func tenths(_ raw: Int) -> Double { Double(raw) / 10 }
    /// 0.5 of a unit.
    static func halves(_ raw: Int) -> Double { Double(raw) / 2 }
}
