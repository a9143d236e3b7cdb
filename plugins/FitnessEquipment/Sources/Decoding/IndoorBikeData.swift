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
