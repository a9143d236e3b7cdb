public import BLECentral
import FoundationEssentials
public import GatewayRuntime
public import SampleBus

/// The `config` object of a `ble-fitness` source. Every key is optional; see the plugin's
/// README.md and sample-config.json. Decoding is strict (``ConfigurationDecoder``); the defaults
/// are declared once, in the memberwise initializers; ``validated(in:)`` checks every value.
public struct FitnessEquipmentConfiguration: Decodable, Sendable, Hashable, PluginConfigurationContract {
    /// The Bluetooth stack (default `bluez`).
    public var transport: BLETransportChoice
    /// The BlueZ adapter (`hci0`); nil means the adapter BlueZ lists first by name.
    public var adapter: String?
    /// Several BlueZ adapters to spread the devices over (instead of `adapter`).
    public var adapters: [String]?
    /// Which peripherals to follow.
    public var devices: DeviceSelection
    /// How many devices to follow at once; nil means 4 for BlueZ (a bike's speed, cadence and
    /// power sensors and a trainer) and every simulated device.
    public var maxDevices: Int?
    /// Reconnect and rediscovery backoff.
    public var reconnect: ReconnectPolicy
    /// The wheel's circumference for wheel revolutions, millimetres (default 2105, a 700×25C
    /// road tyre).
    public var wheelCircumferenceMillimeters: Double
    /// A wheel or crank whose event time has not changed for this long is stopped (seconds).
    public var stopTimeoutSeconds: Double
    /// Settings of the simulated transport.
    public var simulation: FitnessSimulationSettings

    /// The configuration with every default.
    public init(
        transport: BLETransportChoice = .bluez, adapter: String? = nil, adapters: [String]? = nil,
        devices: DeviceSelection = .any,
        maxDevices: Int? = nil, reconnect: ReconnectPolicy = ReconnectPolicy(),
        wheelCircumferenceMillimeters: Double = 2105, stopTimeoutSeconds: Double = 3,
        simulation: FitnessSimulationSettings = FitnessSimulationSettings()
    ) {
        self.transport = transport
        self.adapter = adapter
        self.adapters = adapters
        self.devices = devices
        self.maxDevices = maxDevices
        self.reconnect = reconnect
        self.wheelCircumferenceMillimeters = wheelCircumferenceMillimeters
        self.stopTimeoutSeconds = stopTimeoutSeconds
        self.simulation = simulation
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case transport, adapter, adapters, adapterLimits, devices, maxDevices, reconnect, wheelCircumferenceMillimeters, stopTimeoutSeconds, simulation
    }

    /// Decodes the `config` object.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if c.contains(.adapterLimits) { throw BLESourceKeys.movedAdapterLimits }
        let defaults = FitnessEquipmentConfiguration()
        transport = try c.decodeIfPresent(BLETransportChoice.self, forKey: .transport) ?? defaults.transport
        adapter = try c.decodeIfPresent(String.self, forKey: .adapter)
        adapters = try c.decodeIfPresent([String].self, forKey: .adapters)
        devices = try c.decodeIfPresent(DeviceSelection.self, forKey: .devices) ?? defaults.devices
        maxDevices = try c.decodeIfPresent(Int.self, forKey: .maxDevices)
        reconnect = try c.decodeIfPresent(ReconnectPolicy.self, forKey: .reconnect) ?? defaults.reconnect
        wheelCircumferenceMillimeters =
            try c.decodeIfPresent(Double.self, forKey: .wheelCircumferenceMillimeters) ?? defaults.wheelCircumferenceMillimeters
        stopTimeoutSeconds = try c.decodeIfPresent(Double.self, forKey: .stopTimeoutSeconds) ?? defaults.stopTimeoutSeconds
        simulation = try c.decodeIfPresent(FitnessSimulationSettings.self, forKey: .simulation) ?? defaults.simulation
    }

    /// The adapters the source uses (nil: the first BlueZ lists).
    public var adapterNames: [String?] { BLESourceKeys.adapterNames(adapter: adapter, adapters: adapters) }

    /// The number of devices followed at once, after defaults.
    public var effectiveMaxDevices: Int {
        maxDevices ?? (transport == .simulated ? simulation.bikes + simulation.rowers : 4)
    }

    /// The allowed `wheelCircumferenceMillimeters`: from a folding bike's 16-inch wheel to a
    /// fat bike's 29-inch one, with room.
    public static let wheelRange: ClosedRange<Double> = 500...3500
    /// The allowed `stopTimeoutSeconds`.
    public static let stopTimeoutRange: ClosedRange<Double> = 1...60

    /// ``validate()``; the settings are the configuration itself.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> FitnessEquipmentConfiguration {
        try validate()
        return self
    }

    /// Checks every value that decodes but cannot work; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validate() throws(PluginConfigurationError) {
        try BLESourceKeys.validate(
            maxDevices: maxDevices, adapter: adapter, adapters: adapters,
            simulated: transport == .simulated, notificationsPerSecond: simulation.notificationsPerSecond)
        try PluginConfigurationError.check(
            "wheelCircumferenceMillimeters", wheelCircumferenceMillimeters, in: Self.wheelRange, unit: "millimetres")
        try PluginConfigurationError.check("stopTimeoutSeconds", stopTimeoutSeconds, in: Self.stopTimeoutRange, unit: "seconds")
        try PluginConfigurationError.check("simulation.bikes", simulation.bikes, in: BLESourceKeys.simulatedDevices)
        try PluginConfigurationError.check("simulation.rowers", simulation.rowers, in: BLESourceKeys.simulatedDevices)
        if transport == .simulated, simulation.bikes + simulation.rowers == 0 {
            throw PluginConfigurationError(keyPath: "simulation", reason: "simulates no device")
        }
    }
}

/// Settings of the simulated transport (`transport: "simulated"`).
public struct FitnessSimulationSettings: Decodable, Sendable, Hashable {
    /// Simulated bikes, each with a speed and cadence sensor and a power meter (default 1).
    public var bikes: Int
    /// Simulated rowers, Fitness Machines sending Rower Data (default 0).
    public var rowers: Int
    /// Notifications per second per characteristic (default 1, as real sensors send).
    public var notificationsPerSecond: Double

    /// Settings with the given device counts and rate.
    public init(bikes: Int = 1, rowers: Int = 0, notificationsPerSecond: Double = 1) {
        self.bikes = bikes
        self.rowers = rowers
        self.notificationsPerSecond = notificationsPerSecond
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case bikes, rowers, notificationsPerSecond }

    /// Decodes `simulation`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = FitnessSimulationSettings()
        bikes = try c.decodeIfPresent(Int.self, forKey: .bikes) ?? defaults.bikes
        rowers = try c.decodeIfPresent(Int.self, forKey: .rowers) ?? defaults.rowers
        notificationsPerSecond =
            try c.decodeIfPresent(Double.self, forKey: .notificationsPerSecond) ?? defaults.notificationsPerSecond
    }
}

extension FitnessEquipmentConfiguration {
    /// Every key of the `config` object.
    public static var configurationSchema: ConfigurationSchema {
        let defaults = FitnessEquipmentConfiguration()
        let simulation = FitnessSimulationSettings()
        return .object(
            BLESourceKeys.sharedProperties(maxDevicesDefault: "4 with bluez, every simulated device when simulated") + [
                ConfigurationProperty(
                    "wheelCircumferenceMillimeters", .number(wheelRange, unit: "millimetres"),
                    default: .number(defaults.wheelCircumferenceMillimeters), "The bike wheel's circumference, for speed and distance"),
                ConfigurationProperty(
                    "stopTimeoutSeconds", .number(stopTimeoutRange, unit: "seconds"),
                    default: .number(defaults.stopTimeoutSeconds), "A sensor whose counts stop changing this long reads zero"),
                ConfigurationProperty(
                    "simulation",
                    .object([
                        BLESourceKeys.simulatedCount(
                            "bikes", default: simulation.bikes, "Simulated bikes (speed and cadence sensor and power meter)"),
                        BLESourceKeys.simulatedCount("rowers", default: simulation.rowers, "Simulated rowers (Fitness Machine)"),
                        BLESourceKeys.notificationRateProperty,
                    ]), "The simulated transport's devices (transport: simulated); together at least one"),
            ])
    }
}
