/// Indoor Bike Data (0x2AD2) with its fields in SI units.
public struct IndoorBikeData: FitnessMachineRecord {
    /// The Indoor Bike Data layout.
    public static var layout: FitnessMachineLayout { .indoorBike }
    /// The decoded fields.
    public var data: FitnessMachineData

    /// Wraps decoded fields.
    public init(_ data: FitnessMachineData) { self.data = data }

    /// Speed in m/s (sent in 0.01 km/h).
    public var instantaneousSpeed: Double? { data.raw[.instantaneousSpeed].map(FitnessUnits.speed) }
    /// Average speed in m/s.
    public var averageSpeed: Double? { data.raw[.averageSpeed].map(FitnessUnits.speed) }
    /// Cadence in revolutions per minute (sent in 0.5 /min).
    public var instantaneousCadence: Double? { data.raw[.instantaneousCadence].map(FitnessUnits.halves) }
    /// Average cadence in revolutions per minute.
    public var averageCadence: Double? { data.raw[.averageCadence].map(FitnessUnits.halves) }
    /// Resistance level, unitless (sint16, FTMS v1.0).
    public var resistanceLevel: Double? { data.raw[.resistanceLevel].map(Double.init) }
    /// Power in W (sint16).
    public var instantaneousPower: Double? { data.raw[.instantaneousPower].map(Double.init) }
    /// Average power in W.
    public var averagePower: Double? { data.raw[.averagePower].map(Double.init) }
}
