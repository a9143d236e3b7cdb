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
