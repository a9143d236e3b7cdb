/// Rower Data (0x2AD1) with its fields in SI units.
public struct RowerData: FitnessMachineRecord {
    /// The Rower Data layout.
    public static var layout: FitnessMachineLayout { .rower }
    /// The decoded fields.
    public var data: FitnessMachineData

    /// Wraps decoded fields.
    public init(_ data: FitnessMachineData) { self.data = data }

    /// Strokes per minute (sent in 0.5 /min).
    public var strokeRate: Double? { data.raw[.strokeRate].map(FitnessUnits.halves) }
    /// Strokes since the start.
    public var strokeCount: Int? { data.raw[.strokeCount] }
    /// Average strokes per minute.
    public var averageStrokeRate: Double? { data.raw[.averageStrokeRate].map(FitnessUnits.halves) }
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
}
