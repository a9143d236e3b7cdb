public import FoundationEssentials
public import BLECentral
public import GatewayRuntime
public import SampleBus

/// The `config` object of a `ble-heart-rate` source. Every key is optional; see the plugin's
/// README.md and sample-config.json. Decoding is strict (``ConfigurationDecoder``); the defaults
/// are declared once, in the memberwise initializers; ``validated(in:)`` checks every value.
public struct HeartRateSourceConfiguration: Decodable, Sendable, Hashable, PluginConfigurationContract {
    /// Which Bluetooth stack to use.
    public typealias TransportChoice = BLETransportChoice

    /// The Bluetooth stack (default `bluez`).
    public var transport: TransportChoice
    /// The BlueZ adapter (`hci0`); nil means the adapter BlueZ lists first by name.
    public var adapter: String?
    /// Several BlueZ adapters to spread the devices over (instead of `adapter`).
    public var adapters: [String]?
    /// Which peripherals to follow.
    public var devices: DeviceSelection
    /// How many devices to follow at once; nil means 1 for BlueZ and every simulated device.
    public var maxDevices: Int?
    /// Reconnect and rediscovery backoff.
    public var reconnect: ReconnectPolicy
    /// A heartbeat series is published at least this often (seconds) while connected.
    public var heartbeatSeriesSeconds: Double
    /// …or once it holds this many beats, whichever comes first.
    public var heartbeatSeriesMaxBeats: Int
    /// Cumulative running samples (distance, estimated steps) cover windows this long (seconds).
    public var runningWindowSeconds: Double
    /// Settings of the simulated transport.
    public var simulation: SimulationSettings

    /// The configuration with every default.
    public init(
        transport: TransportChoice = .bluez, adapter: String? = nil, adapters: [String]? = nil,
        devices: DeviceSelection = .any,
        maxDevices: Int? = nil, reconnect: ReconnectPolicy = ReconnectPolicy(),
        heartbeatSeriesSeconds: Double = 60, heartbeatSeriesMaxBeats: Int = 300,
        runningWindowSeconds: Double = 10, simulation: SimulationSettings = SimulationSettings()
    ) {
        self.transport = transport
        self.adapter = adapter
        self.adapters = adapters
        self.devices = devices
        self.maxDevices = maxDevices
        self.reconnect = reconnect
        self.heartbeatSeriesSeconds = heartbeatSeriesSeconds
        self.heartbeatSeriesMaxBeats = heartbeatSeriesMaxBeats
        self.runningWindowSeconds = runningWindowSeconds
        self.simulation = simulation
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case transport, adapter, adapters, adapterLimits, devices, maxDevices, reconnect, heartbeatSeriesSeconds,
            heartbeatSeriesMaxBeats, runningWindowSeconds, simulation
    }

    /// Decodes the `config` object.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if c.contains(.adapterLimits) { throw BLESourceKeys.movedAdapterLimits }
        let defaults = HeartRateSourceConfiguration()
        transport = try c.decodeIfPresent(TransportChoice.self, forKey: .transport) ?? defaults.transport
        adapter = try c.decodeIfPresent(String.self, forKey: .adapter)
        adapters = try c.decodeIfPresent([String].self, forKey: .adapters)
        devices = try c.decodeIfPresent(DeviceSelection.self, forKey: .devices) ?? defaults.devices
        maxDevices = try c.decodeIfPresent(Int.self, forKey: .maxDevices)
        reconnect = try c.decodeIfPresent(ReconnectPolicy.self, forKey: .reconnect) ?? defaults.reconnect
        heartbeatSeriesSeconds =
            try c.decodeIfPresent(Double.self, forKey: .heartbeatSeriesSeconds) ?? defaults.heartbeatSeriesSeconds
        heartbeatSeriesMaxBeats =
            try c.decodeIfPresent(Int.self, forKey: .heartbeatSeriesMaxBeats) ?? defaults.heartbeatSeriesMaxBeats
        runningWindowSeconds =
            try c.decodeIfPresent(Double.self, forKey: .runningWindowSeconds) ?? defaults.runningWindowSeconds
        simulation = try c.decodeIfPresent(SimulationSettings.self, forKey: .simulation) ?? defaults.simulation
    }

    /// The adapters the source uses (nil: the first BlueZ lists).
    public var adapterNames: [String?] { BLESourceKeys.adapterNames(adapter: adapter, adapters: adapters) }

    /// The number of devices followed at once, after defaults.
    public var effectiveMaxDevices: Int {
        maxDevices ?? (transport == .simulated ? simulation.heartRateMonitors + simulation.footPods : 1)
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

extension HeartRateSourceConfiguration {
    /// The allowed `heartbeatSeriesSeconds` and `runningWindowSeconds`.
    public static let windowRange: ClosedRange<Double> = 1...3600
    /// The allowed `heartbeatSeriesMaxBeats`.
    public static let maxBeatsRange = 1...100_000

    /// ``validate()``; the settings are the configuration itself.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> HeartRateSourceConfiguration {
        try validate()
        return self
    }

    /// Checks every value that decodes but cannot work; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validate() throws(PluginConfigurationError) {
        try BLESourceKeys.validate(
            maxDevices: maxDevices, adapter: adapter, adapters: adapters,
            simulated: transport == .simulated, notificationsPerSecond: simulation.notificationsPerSecond)
        try PluginConfigurationError.check("heartbeatSeriesSeconds", heartbeatSeriesSeconds, in: Self.windowRange, unit: "seconds")
        try PluginConfigurationError.check("heartbeatSeriesMaxBeats", heartbeatSeriesMaxBeats, in: Self.maxBeatsRange, unit: "beats")
        try PluginConfigurationError.check("runningWindowSeconds", runningWindowSeconds, in: Self.windowRange, unit: "seconds")
        try PluginConfigurationError.check("simulation.heartRateMonitors", simulation.heartRateMonitors, in: BLESourceKeys.simulatedDevices)
        try PluginConfigurationError.check("simulation.footPods", simulation.footPods, in: BLESourceKeys.simulatedDevices)
        if transport == .simulated, simulation.heartRateMonitors + simulation.footPods == 0 {
            throw PluginConfigurationError(keyPath: "simulation", reason: "simulates no device")
        }
    }
}

extension HeartRateSourceConfiguration {
    /// Every key of the `config` object.
    public static var configurationSchema: ConfigurationSchema {
        let defaults = HeartRateSourceConfiguration()
        let simulation = SimulationSettings()
        return .object(
            BLESourceKeys.sharedProperties(maxDevicesDefault: "1 with bluez, every simulated device when simulated") + [
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
            ])
    }
}
