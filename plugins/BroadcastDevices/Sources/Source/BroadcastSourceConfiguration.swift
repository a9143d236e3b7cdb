public import GatewayRuntime
public import SampleBus

/// Which scanner a broadcast source listens with (its `transport` key).
public enum BroadcastTransportChoice: String, Sendable, Hashable, ConfigurationChoice {
    /// BlueZ over the system D-Bus (the default).
    case bluez
    /// Simulated advertisers sending real payload bytes (`healthgate demo`).
    case simulated
}

/// The `config` object of `ble-polar-broadcast` and `ble-mi-scale` (plugins/BroadcastDevices/
/// README.md and sample-config.json), each key declared once in ``configurationKeys``.
public struct BroadcastSourceConfiguration: Sendable, Hashable, DeclaredConfiguration, PluginConfigurationContract {
    /// The scanner.
    public var transport = BroadcastTransportChoice.bluez
    /// The BlueZ adapter (`hci0`); nil: the first BlueZ lists.
    public var adapter: String?
    /// Which devices to keep: device ids (Polar), addresses or name globs; nil: every device of
    /// the profile.
    public var devices: [String]?
    /// The simulated advertisers.
    public var simulation = BroadcastSimulationConfiguration()

    /// Every key at its default.
    public init() {}

    /// The declared keys, each once.
    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "transport", \.transport, BroadcastTransportChoice.configurationShape,
                "The scanner: bluez (the system's, over D-Bus) or simulated advertisers"),
            ConfigurationKey(
                "adapter", \.adapter, .string(pattern: "^[^/]+$", minLength: 1),
                "The BlueZ adapter (hci0); absent: the first BlueZ lists"),
            ConfigurationKey(
                "devices", \.devices, .array(.string(minLength: 1), minItems: 1),
                "Which advertisers to keep: device ids, addresses or name globs; absent: every one the profile matches"),
            ConfigurationKey("simulation", \.simulation, "The simulated advertisers (transport: simulated)"),
        ]
    }

    /// Checks what ties the keys together; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> BroadcastSourceSettings {
        try PluginConfigurationError.check("simulation.devices", simulation.devices, in: BroadcastSimulationConfiguration.devicesRange)
        try PluginConfigurationError.check(
            "simulation.advertisementsPerSecond", simulation.advertisementsPerSecond,
            in: BroadcastSimulationConfiguration.rateRange, unit: "advertisements per second")
        return BroadcastSourceSettings(transport: transport, adapter: adapter, devices: devices, simulation: simulation)
    }
}

/// The simulated advertisers of a broadcast source.
public struct BroadcastSimulationConfiguration: Sendable, Hashable, DeclaredConfiguration {
    /// How many advertisers.
    public var devices = 1
    /// Each advertiser's advertisements per second.
    public var advertisementsPerSecond: Double = 4

    /// The allowed `devices`.
    public static let devicesRange = 1...64
    /// The allowed `advertisementsPerSecond`.
    public static let rateRange: ClosedRange<Double> = 0.1...50

    /// Every key at its default.
    public init() {}

    /// The declared keys, each once.
    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey("devices", \.devices, .whole(devicesRange, unit: "devices"), "Simulated advertisers"),
            ConfigurationKey(
                "advertisementsPerSecond", \.advertisementsPerSecond, .number(rateRange, unit: "advertisements per second"),
                "Advertisements per second per simulated advertiser"),
        ]
    }
}

/// A broadcast source's checked settings.
public struct BroadcastSourceSettings: Sendable, Hashable {
    /// The scanner.
    public var transport: BroadcastTransportChoice
    /// The BlueZ adapter; nil: the first.
    public var adapter: String?
    /// Device ids, addresses or name globs; nil: every device.
    public var devices: [String]?
    /// The simulated advertisers (transport: simulated).
    public var simulation: BroadcastSimulationConfiguration
}
