import BLECentral
public import GatewayRuntime

/// The `ble-cgm` source's own `config` keys, beside the shared Bluetooth keys
/// (``BLESharedSettings``).
public struct CGMOptions: Decodable, Sendable, Hashable {
    /// What the gateway does about the sensor's session at each connection.
    public enum SessionAction: String, Sendable, Hashable, CaseIterable {
        /// Leaves it as it is (the default): the sensor's own app or button starts it.
        case keep
        /// Starts one when the sensor says its session is stopped.
        case start
        /// Stops a running one (a sensor about to be removed).
        case stop
    }

    /// `session`: keep, start or stop.
    public var session: SessionAction
    /// `communicationIntervalMinutes`: written to the sensor at each connection when set
    /// (1…254, 255 as fast as it can); nil leaves its own.
    public var communicationIntervalMinutes: Int?
    /// The simulated transport's sensors.
    public var simulation: CGMSimulationSettings

    public init(
        session: SessionAction = .keep, communicationIntervalMinutes: Int? = nil,
        simulation: CGMSimulationSettings = CGMSimulationSettings()
    ) {
        self.session = session
        self.communicationIntervalMinutes = communicationIntervalMinutes
        self.simulation = simulation
    }

    enum CodingKeys: String, CodingKey { case session, communicationIntervalMinutes, simulation }

    /// Decodes the profile's keys of the `config` object.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let name = try c.decodeIfPresent(String.self, forKey: .session) ?? SessionAction.keep.rawValue
        guard let session = SessionAction(rawValue: name) else {
            throw PluginConfigurationError(
                keyPath: "session",
                reason: "\"\(name)\" is not one of \(SessionAction.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
        }
        self.session = session
        communicationIntervalMinutes = try c.decodeIfPresent(Int.self, forKey: .communicationIntervalMinutes)
        simulation = try c.decodeIfPresent(CGMSimulationSettings.self, forKey: .simulation) ?? CGMSimulationSettings()
    }

    /// The allowed `communicationIntervalMinutes` (CGMS 1.0.1 §3.6.2.1: 0 would stop the
    /// measurements, which a gateway has no use for).
    public static let communicationIntervalRange = 1...255
    /// The allowed `simulation.recordIntervalMinutes` and `simulation.historyMinutes`.
    public static let recordIntervalRange = 1...60
    public static let historyRange = 0...(14 * 24 * 60)
    /// The allowed `simulation.sensors`: the only kind of simulated device, so at least one.
    public static let sensorsRange = 1...BLESourceKeys.simulatedDevices.upperBound

    /// Checks every value that decodes but cannot work; no I/O.
    public func validate(simulated: Bool) throws(PluginConfigurationError) {
        if let minutes = communicationIntervalMinutes {
            try PluginConfigurationError.check("communicationIntervalMinutes", minutes, in: Self.communicationIntervalRange)
        }
        try PluginConfigurationError.check("simulation.sensors", simulation.sensors, in: Self.sensorsRange)
        try PluginConfigurationError.check(
            "simulation.recordIntervalMinutes", simulation.recordIntervalMinutes, in: Self.recordIntervalRange)
        try PluginConfigurationError.check("simulation.historyMinutes", simulation.historyMinutes, in: Self.historyRange)
    }

    /// The schema of the profile's keys.
    static var properties: [ConfigurationProperty] {
        let defaults = CGMSimulationSettings()
        return [
            ConfigurationProperty(
                "session", .string(values: SessionAction.allCases.map(\.rawValue)), default: .string(SessionAction.keep.rawValue),
                "At each connection: keep the sensor's session as it is, start one when it is stopped, or stop a running one"),
            ConfigurationProperty(
                "communicationIntervalMinutes", .whole(communicationIntervalRange, unit: "minutes"),
                "Written to the sensor at each connection (255: as fast as it can); absent leaves its own"),
            ConfigurationProperty(
                "simulation",
                .object([
                    ConfigurationProperty(
                        "sensors", .whole(sensorsRange, unit: "devices"), default: .number(Double(defaults.sensors)),
                        "Simulated continuous glucose monitors"),
                    ConfigurationProperty(
                        "recordIntervalMinutes", .whole(recordIntervalRange, unit: "minutes"),
                        default: .number(Double(defaults.recordIntervalMinutes)), "Minutes between two records of a simulated sensor"),
                    ConfigurationProperty(
                        "historyMinutes", .whole(historyRange, unit: "minutes"), default: .number(Double(defaults.historyMinutes)),
                        "How far into its session a simulated sensor is when the gateway starts: its stored records"),
                ]), "The simulated transport's sensors (transport: simulated)"),
        ]
    }
}

/// Settings of the simulated transport (`transport: "simulated"`).
public struct CGMSimulationSettings: Decodable, Sendable, Hashable {
    /// Simulated sensors (default 1).
    public var sensors: Int
    /// Minutes between two records (default 5).
    public var recordIntervalMinutes: Int
    /// Minutes of session before the transport is made (default 30): the records stored then.
    public var historyMinutes: Int

    public init(sensors: Int = 1, recordIntervalMinutes: Int = 5, historyMinutes: Int = 30) {
        self.sensors = sensors
        self.recordIntervalMinutes = recordIntervalMinutes
        self.historyMinutes = historyMinutes
    }

    enum CodingKeys: String, CodingKey { case sensors, recordIntervalMinutes, historyMinutes }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = CGMSimulationSettings()
        sensors = try c.decodeIfPresent(Int.self, forKey: .sensors) ?? defaults.sensors
        recordIntervalMinutes = try c.decodeIfPresent(Int.self, forKey: .recordIntervalMinutes) ?? defaults.recordIntervalMinutes
        historyMinutes = try c.decodeIfPresent(Int.self, forKey: .historyMinutes) ?? defaults.historyMinutes
    }
}
