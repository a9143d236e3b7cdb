public import BLECentral
import FoundationEssentials
public import GatewayRuntime
public import SampleBus

/// The `config` object of a `ble-health` source. Every key is optional; see the plugin's
/// README.md and sample-config.json. Decoding is strict (``ConfigurationDecoder``); the defaults
/// are declared once, in the memberwise initializers; ``validated(in:)`` checks every value.
public struct HealthDeviceConfiguration: Decodable, Sendable, Hashable, PluginConfigurationContract {
    /// The Bluetooth stack (default `bluez`).
    public var transport: BLETransportChoice
    /// The BlueZ adapter (`hci0`); nil means the adapter BlueZ lists first by name.
    public var adapter: String?
    /// Several BlueZ adapters to spread the devices over (instead of `adapter`).
    public var adapters: [String]?
    /// Which peripherals to follow.
    public var devices: DeviceSelection
    /// How many devices to follow at once; nil means 4 for BlueZ and every simulated device.
    public var maxDevices: Int?
    /// Reconnect and rediscovery backoff.
    public var reconnect: ReconnectPolicy
    /// Settings of the simulated transport.
    public var simulation: HealthSimulationSettings

    /// The configuration with every default.
    public init(
        transport: BLETransportChoice = .bluez, adapter: String? = nil, adapters: [String]? = nil,
        devices: DeviceSelection = .any,
        maxDevices: Int? = nil, reconnect: ReconnectPolicy = ReconnectPolicy(),
        simulation: HealthSimulationSettings = HealthSimulationSettings()
    ) {
        self.transport = transport
        self.adapter = adapter
        self.adapters = adapters
        self.devices = devices
        self.maxDevices = maxDevices
        self.reconnect = reconnect
        self.simulation = simulation
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case transport, adapter, adapters, adapterLimits, devices, maxDevices, reconnect, simulation
    }

    /// Decodes the `config` object.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if c.contains(.adapterLimits) { throw BLESourceKeys.movedAdapterLimits }
        let defaults = HealthDeviceConfiguration()
        transport = try c.decodeIfPresent(BLETransportChoice.self, forKey: .transport) ?? defaults.transport
        adapter = try c.decodeIfPresent(String.self, forKey: .adapter)
        adapters = try c.decodeIfPresent([String].self, forKey: .adapters)
        devices = try c.decodeIfPresent(DeviceSelection.self, forKey: .devices) ?? defaults.devices
        maxDevices = try c.decodeIfPresent(Int.self, forKey: .maxDevices)
        reconnect = try c.decodeIfPresent(ReconnectPolicy.self, forKey: .reconnect) ?? defaults.reconnect
        simulation = try c.decodeIfPresent(HealthSimulationSettings.self, forKey: .simulation) ?? defaults.simulation
    }

    /// The adapters the source uses (nil: the first BlueZ lists).
    public var adapterNames: [String?] { BLESourceKeys.adapterNames(adapter: adapter, adapters: adapters) }

    /// The number of devices followed at once, after defaults.
    public var effectiveMaxDevices: Int {
        maxDevices ?? (transport == .simulated ? simulation.deviceCount : 4)
    }

    /// The allowed `simulation.measurementIntervalSeconds`.
    public static let measurementIntervalRange: ClosedRange<Double> = 1...3600

    /// ``validate()``; the settings are the configuration itself.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> HealthDeviceConfiguration {
        try validate()
        return self
    }

    /// Checks every value that decodes but cannot work; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validate() throws(PluginConfigurationError) {
        try PluginConfigurationError.check(
            "simulation.measurementIntervalSeconds", simulation.measurementIntervalSeconds, in: Self.measurementIntervalRange,
            unit: "seconds")
        try BLESourceKeys.validate(
            maxDevices: maxDevices, adapter: adapter, adapters: adapters,
            simulated: transport == .simulated, notificationsPerSecond: nil)
        for (key, count) in simulation.counts {
            try PluginConfigurationError.check("simulation.\(key)", count, in: BLESourceKeys.simulatedDevices)
        }
        if transport == .simulated, simulation.deviceCount == 0 {
            throw PluginConfigurationError(keyPath: "simulation", reason: "simulates no device")
        }
    }
}

/// Settings of the simulated transport (`transport: "simulated"`).
public struct HealthSimulationSettings: Decodable, Sendable, Hashable {
    /// Simulated weight scales (default 1).
    public var scales: Int
    /// Simulated blood pressure cuffs (default 1).
    public var cuffs: Int
    /// Simulated thermometers (default 1).
    public var thermometers: Int
    /// Simulated pulse oximeters (default 1).
    public var oximeters: Int
    /// Simulated glucose meters (default 1).
    public var glucoseMeters: Int
    /// Seconds between two measurements of one device (default 20).
    public var measurementIntervalSeconds: Double

    /// Settings with the given device counts and interval.
    public init(
        scales: Int = 1, cuffs: Int = 1, thermometers: Int = 1, oximeters: Int = 1, glucoseMeters: Int = 1,
        measurementIntervalSeconds: Double = 20
    ) {
        self.scales = scales
        self.cuffs = cuffs
        self.thermometers = thermometers
        self.oximeters = oximeters
        self.glucoseMeters = glucoseMeters
        self.measurementIntervalSeconds = measurementIntervalSeconds
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case scales, cuffs, thermometers, oximeters, glucoseMeters, measurementIntervalSeconds
    }

    /// Each device count by its key.
    public var counts: [(key: String, count: Int)] {
        [
            ("scales", scales), ("cuffs", cuffs), ("thermometers", thermometers), ("oximeters", oximeters),
            ("glucoseMeters", glucoseMeters),
        ]
    }

    /// How many devices are simulated in all.
    public var deviceCount: Int { counts.reduce(0) { $0 + max(0, $1.count) } }

    /// Decodes `simulation`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = HealthSimulationSettings()
        scales = try c.decodeIfPresent(Int.self, forKey: .scales) ?? defaults.scales
        cuffs = try c.decodeIfPresent(Int.self, forKey: .cuffs) ?? defaults.cuffs
        thermometers = try c.decodeIfPresent(Int.self, forKey: .thermometers) ?? defaults.thermometers
        oximeters = try c.decodeIfPresent(Int.self, forKey: .oximeters) ?? defaults.oximeters
        glucoseMeters = try c.decodeIfPresent(Int.self, forKey: .glucoseMeters) ?? defaults.glucoseMeters
        measurementIntervalSeconds =
            try c.decodeIfPresent(Double.self, forKey: .measurementIntervalSeconds) ?? defaults.measurementIntervalSeconds
    }
}

extension HealthDeviceConfiguration {
    /// Every key of the `config` object.
    public static var configurationSchema: ConfigurationSchema {
        let simulation = HealthSimulationSettings()
        let names = [
            "scales": "Simulated weight scales with body composition", "cuffs": "Simulated blood pressure cuffs",
            "thermometers": "Simulated thermometers", "oximeters": "Simulated pulse oximeters",
            "glucoseMeters": "Simulated glucose meters",
        ]
        return .object(
            BLESourceKeys.sharedProperties(maxDevicesDefault: "4 with bluez, every simulated device when simulated") + [
                ConfigurationProperty(
                    "simulation",
                    .object(
                        simulation.counts.map { BLESourceKeys.simulatedCount($0.key, default: $0.count, names[$0.key] ?? $0.key) }
                            + [
                                ConfigurationProperty(
                                    "measurementIntervalSeconds", .number(measurementIntervalRange, unit: "seconds"),
                                    default: .number(simulation.measurementIntervalSeconds),
                                    "Seconds between two measurements of one simulated device"),
                            ]), "The simulated transport's devices (transport: simulated); together at least one"),
            ])
    }
}
