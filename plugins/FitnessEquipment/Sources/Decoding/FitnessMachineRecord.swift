/// A typed view of one Fitness Machine data characteristic (``TreadmillData``,
/// ``IndoorBikeData``, ``RowerData``): its raw fields converted to SI units. A conforming type
/// names its layout and its own fields; decoding and the fields the three characteristics share
/// come from here.
public protocol FitnessMachineRecord: Hashable, Sendable {
    /// The layout this characteristic's notifications are decoded by.
    static var layout: FitnessMachineLayout { get }
    /// The decoded fields.
    var data: FitnessMachineData { get }
    /// Wraps decoded fields.
    init(_ data: FitnessMachineData)
}

extension FitnessMachineRecord {
    /// Decodes one notification; see ``FitnessMachineDataDecoder/decode(_:layout:)``.
    public static func decode(_ payload: [UInt8]) throws(FitnessDecodingError) -> Self {
        Self(try FitnessMachineDataDecoder.decode(payload, layout: layout))
    }

    /// Total distance in metres (uint24).
    public var totalDistance: Double? { data.raw[.totalDistance].map(Double.init) }
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
