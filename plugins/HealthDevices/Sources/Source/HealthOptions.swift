public import BLETransport
public import BLECentral
public import GatewayRuntime
public import SampleBus
import HealthModel

/// The `ble-health` source: Bluetooth LE weight scales (0x181D) and body composition analysers
/// (0x181B), blood pressure monitors (0x1810), thermometers (0x1809), pulse oximeters (0x1822)
/// and glucose meters (0x1808), run by the profile kit's ``BluetoothSource``. Per connection,
/// ``HealthSession`` reads Device Information, the battery and the device's clock, subscribes to
/// the measurements the device has (the profiles indicate them; BlueZ confirms each indication),
/// asks a glucose meter for its stored records, and maps every measurement through
/// ``ClinicalRecordMapper``.
public typealias HealthDeviceSource = BluetoothSource<HealthProfile>

/// The `config` object of a `ble-health` source: the shared Bluetooth keys and ``HealthOptions``.
public typealias HealthDeviceConfiguration = BluetoothSourceConfiguration<HealthProfile>

/// The scale, cuff, thermometer, oximeter and glucose meter profile.
public enum HealthProfile: BluetoothProfile {
    public static let kind = "ble-health"
    public static let summary =
        "Bluetooth LE scales, body composition analysers, blood pressure monitors, thermometers, pulse oximeters, glucose meters (GATT 0x181D, 0x181B, 0x1810, 0x1809, 0x1822, 0x1808)."

    /// Scales, body composition analysers, cuffs, thermometers, oximeters and glucose meters.
    public static let deviceKinds = [
        BluetoothDeviceKind("scale", advertising: .weightScaleService, called: "scales"),
        BluetoothDeviceKind("body-composition-analyser", advertising: .bodyCompositionService, called: "body composition analysers"),
        BluetoothDeviceKind("blood-pressure-monitor", advertising: .bloodPressureService, called: "blood pressure monitors"),
        BluetoothDeviceKind("thermometer", advertising: .healthThermometerService, called: "thermometers"),
        BluetoothDeviceKind("pulse-oximeter", advertising: .pulseOximeterService, called: "pulse oximeters"),
        BluetoothDeviceKind("glucose-meter", advertising: .glucoseService, called: "glucose meters"),
    ]

    public static var defaultOptions: HealthOptions { HealthOptions() }
    public static var optionProperties: [ConfigurationProperty] { HealthOptions.properties }
    public static let maxDevicesDefault = "4 with bluez, every simulated device when simulated"

    public static func defaultMaxDevices(_ options: HealthOptions, simulated: Bool) -> Int {
        simulated ? options.simulation.deviceCount : 4
    }

    /// The simulated devices measure every `measurementIntervalSeconds`, not at a rate.
    public static func notificationsPerSecond(_ options: HealthOptions) -> Double? { nil }

    public static func validate(_ options: HealthOptions, simulated: Bool) throws(PluginConfigurationError) {
        try options.validate(simulated: simulated)
    }

    public static func simulator(_ options: HealthOptions, clock: any GatewayClock) -> any BLECentralTransport {
        SimulatedHealthTransport(clock: clock, settings: options.simulation)
    }

    /// One simulated device of each kind.
    public static var demo: BluetoothProfileDemo? {
        BluetoothProfileDemo(name: "demo-health", configuration: HealthDeviceSource.demoConfiguration())
    }

    public static func follow(_ session: PeripheralSession, options: HealthOptions, environment: PluginEnvironment) async throws {
        try await HealthSession(
            session: session, ids: environment.ids, profileHeight: environment.user.heightMeters, clockTrust: environment.clockTrust
        ).run()
    }
}

extension BluetoothSource where Profile == HealthProfile {
    /// A configuration for `healthgate demo`: one simulated device of each kind (scale, cuff,
    /// thermometer, pulse oximeter, glucose meter) measuring every `intervalSeconds`.
    public static func demoConfiguration(intervalSeconds: Double = 20) -> JSONValue {
        .object([
            "transport": .string("simulated"),
            "simulation": .object([
                "scales": .number(1), "cuffs": .number(1), "thermometers": .number(1), "oximeters": .number(1),
                "glucoseMeters": .number(1), "measurementIntervalSeconds": .number(intervalSeconds),
            ]),
        ])
    }
}

/// The `ble-health` source's own `config` keys, beside the shared Bluetooth keys
/// (``BLESharedSettings``): only its simulator's.
public struct HealthOptions: Decodable, Sendable, Hashable {
    /// The simulated transport's devices and interval.
    public var simulation: HealthSimulationSettings

    /// The options with every default.
    public init(simulation: HealthSimulationSettings = HealthSimulationSettings()) {
        self.simulation = simulation
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case simulation }

    /// Decodes the profile's keys of the `config` object.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        simulation = try c.decodeIfPresent(HealthSimulationSettings.self, forKey: .simulation) ?? HealthSimulationSettings()
    }

    /// The allowed `simulation.measurementIntervalSeconds`.
    public static let measurementIntervalRange: ClosedRange<Double> = 1...3600

    /// Checks every value that decodes but cannot work; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validate(simulated: Bool) throws(PluginConfigurationError) {
        try PluginConfigurationError.check(
            "simulation.measurementIntervalSeconds", simulation.measurementIntervalSeconds, in: Self.measurementIntervalRange,
            unit: "seconds")
        for (key, count) in simulation.counts {
            try PluginConfigurationError.check("simulation.\(key)", count, in: BLESourceKeys.simulatedDevices)
        }
        if simulated, simulation.deviceCount == 0 {
            throw PluginConfigurationError(keyPath: "simulation", reason: "simulates no device")
        }
    }

    /// The schema of the profile's keys.
    static var properties: [ConfigurationProperty] {
        let simulation = HealthSimulationSettings()
        let names = [
            "scales": "Simulated weight scales with body composition", "cuffs": "Simulated blood pressure cuffs",
            "thermometers": "Simulated thermometers", "oximeters": "Simulated pulse oximeters",
            "glucoseMeters": "Simulated glucose meters",
        ]
        return [
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
        ]
    }
}

extension BluetoothSourceConfiguration where Profile == HealthProfile {
    /// A configuration from its keys, with every default.
    public init(
        transport: BLETransportChoice = .bluez, adapter: String? = nil, adapters: [String]? = nil,
        devices: DeviceSelection = .any, maxDevices: Int? = nil, reconnect: ReconnectPolicy = ReconnectPolicy(),
        simulation: HealthSimulationSettings = HealthSimulationSettings()
    ) {
        self.init(
            shared: BLESharedSettings(
                transport: transport, adapter: adapter, adapters: adapters, devices: devices, maxDevices: maxDevices,
                reconnect: reconnect),
            options: HealthOptions(simulation: simulation))
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
