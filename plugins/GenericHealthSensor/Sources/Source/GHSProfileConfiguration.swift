public import BLEProfileKit
public import GatewayRuntime

/// The `ble-ghs` source's own `config` keys, beside the shared Bluetooth keys
/// (``BluetoothSharedConfiguration``), each declared once in ``configurationKeys``.
public struct GHSProfileConfiguration: Sendable, BluetoothProfileConfiguration {
    /// `liveObservations`: whether the gateway asks each sensor to send live observations
    /// (GHS Control Point "start"); when false it only downloads what the sensor stored.
    public var liveObservations = true
    /// The simulated transport's sensors.
    public var simulation = GHSSimulationConfiguration()

    /// Every key at its default.
    public init() {}

    /// The keys given, every other at its default.
    public init(liveObservations: Bool? = nil, simulation: GHSSimulationConfiguration? = nil) {
        if let liveObservations { self.liveObservations = liveObservations }
        if let simulation { self.simulation = simulation }
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "liveObservations", \.liveObservations, .boolean,
                "Ask each sensor to send live observations (GHS Control Point); false: only download its stored observations"),
            .simulation(\.simulation, "The simulated transport's sensors (transport: simulated)"),
        ]
    }
}

/// The simulated transport's Generic Health Sensors (`simulation`, with `transport: "simulated"`).
public struct GHSSimulationConfiguration: Sendable, BluetoothSimulation {
    /// Simulated pulse oximeters: SpO2 and pulse rate as a bundle of two numeric observations.
    public var oximeters = 1
    /// Simulated blood pressure monitors: a compound observation (systolic, diastolic, mean) and
    /// a pulse rate.
    public var cuffs = 1
    /// Seconds between two observations of one sensor.
    public var observationIntervalSeconds: Double = 5
    /// Observations each sensor stored before the gateway started: downloaded at its first
    /// connection.
    public var storedObservations = 6

    /// Every key at its default.
    public init() {}

    /// The values given, every other at its default.
    public init(oximeters: Int? = nil, cuffs: Int? = nil, observationIntervalSeconds: Double? = nil, storedObservations: Int? = nil) {
        if let oximeters { self.oximeters = oximeters }
        if let cuffs { self.cuffs = cuffs }
        if let observationIntervalSeconds { self.observationIntervalSeconds = observationIntervalSeconds }
        if let storedObservations { self.storedObservations = storedObservations }
    }

    /// The allowed `observationIntervalSeconds`.
    public static let observationIntervalRange: ClosedRange<Double> = 1...3600
    /// The allowed `storedObservations`.
    public static let storedRange = 0...10_000

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .simulatedCount("oximeters", \.oximeters, "Simulated GHS pulse oximeters (live and stored bundles, segmented)"),
            .simulatedCount("cuffs", \.cuffs, "Simulated GHS blood pressure monitors (compound observations)"),
            ConfigurationKey(
                "observationIntervalSeconds", \.observationIntervalSeconds, .number(observationIntervalRange, unit: "seconds"),
                "Seconds between two observations of one simulated sensor"),
            ConfigurationKey(
                "storedObservations", \.storedObservations, .whole(storedRange, unit: "observations"),
                "Observations each simulated sensor stored before the gateway started"),
        ]
    }

    /// The sensors.
    public var deviceCount: Int { oximeters + cuffs }
}
