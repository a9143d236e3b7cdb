import BLETransport
public import BLECentral
public import GatewayRuntime
import SampleBus

/// The `ble-heart-rate` source's own `config` keys, beside the shared Bluetooth keys
/// (``BLESharedSettings``). Every key is optional; see the plugin's README.md and
/// sample-config.json. The defaults are declared once, in the memberwise initializer.
public struct HeartRateOptions: Decodable, Sendable, Hashable {
    /// A heartbeat series is published at least this often (seconds) while connected.
    public var heartbeatSeriesSeconds: Double
    /// …or once it holds this many beats, whichever comes first.
    public var heartbeatSeriesMaxBeats: Int
    /// Cumulative running samples (distance, estimated steps) cover windows this long (seconds).
    public var runningWindowSeconds: Double
    /// The simulated transport's devices and rate.
    public var simulation: SimulationSettings

    /// The options with every default.
    public init(
        heartbeatSeriesSeconds: Double = 60, heartbeatSeriesMaxBeats: Int = 300, runningWindowSeconds: Double = 10,
        simulation: SimulationSettings = SimulationSettings()
    ) {
        self.heartbeatSeriesSeconds = heartbeatSeriesSeconds
        self.heartbeatSeriesMaxBeats = heartbeatSeriesMaxBeats
        self.runningWindowSeconds = runningWindowSeconds
        self.simulation = simulation
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case heartbeatSeriesSeconds, heartbeatSeriesMaxBeats, runningWindowSeconds, simulation
    }

    /// Decodes the profile's keys of the `config` object.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = HeartRateOptions()
        heartbeatSeriesSeconds =
            try c.decodeIfPresent(Double.self, forKey: .heartbeatSeriesSeconds) ?? defaults.heartbeatSeriesSeconds
        heartbeatSeriesMaxBeats =
            try c.decodeIfPresent(Int.self, forKey: .heartbeatSeriesMaxBeats) ?? defaults.heartbeatSeriesMaxBeats
        runningWindowSeconds =
            try c.decodeIfPresent(Double.self, forKey: .runningWindowSeconds) ?? defaults.runningWindowSeconds
        simulation = try c.decodeIfPresent(SimulationSettings.self, forKey: .simulation) ?? defaults.simulation
    }

    /// The allowed `heartbeatSeriesSeconds` and `runningWindowSeconds`.
    public static let windowRange: ClosedRange<Double> = 1...3600
    /// The allowed `heartbeatSeriesMaxBeats`.
    public static let maxBeatsRange = 1...100_000

    /// Checks every value that decodes but cannot work; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validate(simulated: Bool) throws(PluginConfigurationError) {
        try PluginConfigurationError.check("heartbeatSeriesSeconds", heartbeatSeriesSeconds, in: Self.windowRange, unit: "seconds")
        try PluginConfigurationError.check("heartbeatSeriesMaxBeats", heartbeatSeriesMaxBeats, in: Self.maxBeatsRange, unit: "beats")
        try PluginConfigurationError.check("runningWindowSeconds", runningWindowSeconds, in: Self.windowRange, unit: "seconds")
        try PluginConfigurationError.check("simulation.heartRateMonitors", simulation.heartRateMonitors, in: BLESourceKeys.simulatedDevices)
        try PluginConfigurationError.check("simulation.footPods", simulation.footPods, in: BLESourceKeys.simulatedDevices)
        if simulated, simulation.heartRateMonitors + simulation.footPods == 0 {
            throw PluginConfigurationError(keyPath: "simulation", reason: "simulates no device")
        }
    }

    /// The schema of the profile's keys.
    static var properties: [ConfigurationProperty] {
        let defaults = HeartRateOptions()
        let simulation = SimulationSettings()
        return [
            ConfigurationProperty(
                "heartbeatSeriesSeconds", .number(windowRange, unit: "seconds"),
                default: .number(defaults.heartbeatSeriesSeconds), "A heartbeat series is published at least this often"),
            ConfigurationProperty(
                "heartbeatSeriesMaxBeats", .whole(maxBeatsRange, unit: "beats"),
                default: .number(Double(defaults.heartbeatSeriesMaxBeats)), "…or once it holds this many beats"),
            ConfigurationProperty(
                "runningWindowSeconds", .number(windowRange, unit: "seconds"),
                default: .number(defaults.runningWindowSeconds), "The window of cumulative running samples (distance, steps)"),
            ConfigurationProperty(
                "simulation",
                .object([
                    BLESourceKeys.simulatedCount(
                        "heartRateMonitors", default: simulation.heartRateMonitors, "Simulated heart-rate monitors"),
                    BLESourceKeys.simulatedCount("footPods", default: simulation.footPods, "Simulated running foot pods"),
                    BLESourceKeys.notificationRateProperty,
                ]), "The simulated transport's devices (transport: simulated); together at least one"),
        ]
    }
}

extension BluetoothSourceConfiguration where Profile == HeartRateProfile {
    /// A configuration from its keys, with every default.
    public init(
        transport: BLETransportChoice = .bluez, adapter: String? = nil, adapters: [String]? = nil,
        devices: DeviceSelection = .any, maxDevices: Int? = nil, reconnect: ReconnectPolicy = ReconnectPolicy(),
        heartbeatSeriesSeconds: Double = 60, heartbeatSeriesMaxBeats: Int = 300, runningWindowSeconds: Double = 10,
        simulation: SimulationSettings = SimulationSettings()
    ) {
        self.init(
            shared: BLESharedSettings(
                transport: transport, adapter: adapter, adapters: adapters, devices: devices, maxDevices: maxDevices,
                reconnect: reconnect),
            options: HeartRateOptions(
                heartbeatSeriesSeconds: heartbeatSeriesSeconds, heartbeatSeriesMaxBeats: heartbeatSeriesMaxBeats,
                runningWindowSeconds: runningWindowSeconds, simulation: simulation))
    }
}

/// Settings of the simulated transport (`transport: "simulated"`).
public struct SimulationSettings: Decodable, Sendable, Hashable {
    /// Simulated heart-rate monitors (default 1).
    public var heartRateMonitors: Int
    /// Simulated running foot pods (default 0).
    public var footPods: Int
    /// Notifications per second per device (default 1, as real monitors send).
    public var notificationsPerSecond: Double

    /// Settings with the given device counts and rate.
    public init(heartRateMonitors: Int = 1, footPods: Int = 0, notificationsPerSecond: Double = 1) {
        self.heartRateMonitors = heartRateMonitors
        self.footPods = footPods
        self.notificationsPerSecond = notificationsPerSecond
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case heartRateMonitors, footPods, notificationsPerSecond }

    /// Decodes `simulation`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = SimulationSettings()
        heartRateMonitors = try c.decodeIfPresent(Int.self, forKey: .heartRateMonitors) ?? defaults.heartRateMonitors
        footPods = try c.decodeIfPresent(Int.self, forKey: .footPods) ?? defaults.footPods
        notificationsPerSecond =
            try c.decodeIfPresent(Double.self, forKey: .notificationsPerSecond) ?? defaults.notificationsPerSecond
    }
}
