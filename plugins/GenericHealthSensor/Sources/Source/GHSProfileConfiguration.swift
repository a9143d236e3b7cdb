public import BLEProfileKit
public import GatewayRuntime

/// The `ble-ghs` source's own `config` keys, beside the shared Bluetooth keys
/// (``BluetoothSharedConfiguration``), each declared once in ``configurationKeys``.
public struct GHSProfileConfiguration: Sendable, BluetoothProfileConfiguration {
    /// `liveObservations`: whether the gateway asks each sensor to send live observations
    /// (GHS Control Point "start"); when false it asks the sensor to stop sending them ("stop":
    /// some send them unasked) and only downloads what the sensor stored.
    public var liveObservations = true
    /// `deleteStoredObservations`: whether the gateway erases, from each sensor's memory, the
    /// stored observations it downloaded, once the store has committed them (on stable storage);
    /// off by default: the sensor's memory is the patient's, and another collector may want it.
    public var deleteStoredObservations = false
    /// `schedules`: the observation schedules written to each sensor at each connection, one per
    /// observation type at most.
    public var schedules: [GHSScheduleConfiguration] = []
    /// The simulated transport's sensors.
    public var simulation = GHSSimulationConfiguration()

    /// Every key at its default.
    public init() {}

    /// The keys given, every other at its default.
    public init(
        liveObservations: Bool? = nil, deleteStoredObservations: Bool? = nil, schedules: [GHSScheduleConfiguration]? = nil,
        simulation: GHSSimulationConfiguration? = nil
    ) {
        if let liveObservations { self.liveObservations = liveObservations }
        if let deleteStoredObservations { self.deleteStoredObservations = deleteStoredObservations }
        if let schedules { self.schedules = schedules }
        if let simulation { self.simulation = simulation }
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "liveObservations", \.liveObservations, .boolean,
                "Ask each sensor to send live observations (GHS Control Point); false: ask it to stop sending them and only download its stored observations"),
            ConfigurationKey(
                "deleteStoredObservations", \.deleteStoredObservations, .boolean,
                "Erase the stored observations downloaded from each sensor's memory once the store has committed them "
                    + "(Record Access Control Point \"delete\", records up to the last one committed); never before"),
            ConfigurationKey(
                "schedules", \.schedules, .array(GHSScheduleConfiguration.configurationSchema),
                "Observation schedules written to each sensor at each connection (its Observation Schedule descriptors), "
                    + "one per observation type; a sensor that refuses one keeps its own, and the log says so"),
            .simulation(\.simulation, "The simulated transport's sensors (transport: simulated)"),
        ]
    }

    /// One schedule per observation type: two would leave the sensor with whichever came last.
    public func checkDecoded() throws(PluginConfigurationError) {
        var first: [Int: Int] = [:]
        for (index, schedule) in schedules.enumerated() {
            if let earlier = first[schedule.type] {
                throw PluginConfigurationError(
                    keyPath: "schedules[\(index)].type", reason: "type \(schedule.type) is scheduled already by schedules[\(earlier)]")
            }
            first[schedule.type] = index
        }
    }

    /// The same check for a configuration built in code (the kit checks the numbers against the
    /// declared ranges itself).
    public func validate(simulated: Bool) throws(PluginConfigurationError) {
        try checkDecoded()
    }
}

/// One entry of `schedules`: the Observation Schedule the gateway writes for one observation type
/// (descriptor 0x2910 of Health Sensor Features): how often the sensor measures
/// and how often it sends. Written to each sensor that has a schedule descriptor for the type.
public struct GHSScheduleConfiguration: DeclaredConfiguration, Hashable {
    /// `type`: the observation type's MDC code (150456 is SpO2, MDC_PULS_OXIM_SAT_O2).
    public var type = 0
    /// `measurementPeriodSeconds`: how often the sensor measures.
    public var measurementPeriodSeconds: Double = 1
    /// `updateIntervalSeconds`: how often the sensor sends.
    public var updateIntervalSeconds: Double = 1

    /// A placeholder the decoder replaces: every key is required.
    public init() {}

    /// A schedule from its values.
    public init(type: Int, measurementPeriodSeconds: Double, updateIntervalSeconds: Double) {
        self.type = type
        self.measurementPeriodSeconds = measurementPeriodSeconds
        self.updateIntervalSeconds = updateIntervalSeconds
    }

    /// The MDC codes an observation type may have (a uint32 on the air; 0 names none).
    public static let typeRange = 1...Int(UInt32.max)
    /// The periods and intervals accepted: positive and finite, from a millisecond (below it a
    /// schedule means nothing a sensor can do) to a year.
    public static let secondsRange: ClosedRange<Double> = 0.001...31_536_000

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("type", \.type, .whole(typeRange, unit: "MDC code"), "The observation type's MDC code (150456: SpO2)"),
            .required(
                "measurementPeriodSeconds", \.measurementPeriodSeconds, .number(secondsRange, unit: "seconds"),
                "How often the sensor measures"),
            .required(
                "updateIntervalSeconds", \.updateIntervalSeconds, .number(secondsRange, unit: "seconds"),
                "How often the sensor sends what it measured"),
        ]
    }

    /// The descriptor's value to write.
    public var schedule: GHSObservationSchedule {
        GHSObservationSchedule(
            type: UInt32(clamping: type), measurementPeriodSeconds: measurementPeriodSeconds, updateIntervalSeconds: updateIntervalSeconds)
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
