public import BLETransport
public import BLECentral
public import GatewayRuntime
public import SampleBus

/// The `ble-fitness` source: Bluetooth LE cycling speed and cadence sensors (0x1816), power
/// meters (0x1818) and fitness machines (0x1826: treadmills, indoor bikes, rowers), run by the
/// profile kit's ``BluetoothSource``. Per connection, ``FitnessSession`` reads Device
/// Information and the battery, subscribes to every measurement the device has and maps the
/// notifications through ``FitnessRecordMapper``.
public typealias FitnessEquipmentSource = BluetoothSource<FitnessProfile>

/// The `config` object of a `ble-fitness` source: the shared Bluetooth keys and
/// ``FitnessOptions``.
public typealias FitnessEquipmentConfiguration = BluetoothSourceConfiguration<FitnessProfile>

/// The bike sensor, power meter and fitness machine profile.
public enum FitnessProfile: BluetoothProfile {
    public static let kind = "ble-fitness"
    public static let summary =
        "Bluetooth LE bike sensors, power meters and fitness machines (GATT 0x1816, 0x1818, 0x1826)."

    /// Bike sensors, power meters and fitness machines.
    public static let deviceKinds = [
        BluetoothDeviceKind("speed-cadence-sensor", advertising: .cyclingSpeedAndCadenceService, called: "bike speed and cadence sensors"),
        BluetoothDeviceKind("power-meter", advertising: .cyclingPowerService, called: "power meters"),
        BluetoothDeviceKind("fitness-machine", advertising: .fitnessMachineService, called: "fitness machines"),
    ]

    public static var defaultOptions: FitnessOptions { FitnessOptions() }
    public static var optionProperties: [ConfigurationProperty] { FitnessOptions.properties }
    public static let maxDevicesDefault = "4 with bluez, every simulated device when simulated"

    /// A bike's speed, cadence and power sensors and a trainer; every simulated device.
    public static func defaultMaxDevices(_ options: FitnessOptions, simulated: Bool) -> Int {
        simulated ? options.simulation.bikes + options.simulation.rowers : 4
    }

    public static func notificationsPerSecond(_ options: FitnessOptions) -> Double? { options.simulation.notificationsPerSecond }

    public static func validate(_ options: FitnessOptions, simulated: Bool) throws(PluginConfigurationError) {
        try options.validate(simulated: simulated)
    }

    public static func simulator(_ options: FitnessOptions, clock: any GatewayClock) -> any BLECentralTransport {
        SimulatedFitnessTransport(clock: clock, settings: options.simulation)
    }

    /// One simulated bike.
    public static var demo: BluetoothProfileDemo? {
        BluetoothProfileDemo(name: "demo-bike", configuration: FitnessEquipmentSource.demoConfiguration())
    }

    public static func follow(_ session: PeripheralSession, options: FitnessOptions, environment: PluginEnvironment) async throws {
        try await FitnessSession(session: session, options: options, ids: environment.ids).run()
    }
}

extension BluetoothSource where Profile == FitnessProfile {
    /// A configuration for `healthgate demo`: the simulated transport with `bikes` bikes.
    public static func demoConfiguration(bikes: Int = 1, notificationsPerSecond: Double = 1) -> JSONValue {
        .object([
            "transport": .string("simulated"),
            "simulation": .object([
                "bikes": .number(Double(bikes)), "notificationsPerSecond": .number(notificationsPerSecond),
            ]),
        ])
    }
}

/// The `ble-fitness` source's own `config` keys, beside the shared Bluetooth keys
/// (``BLESharedSettings``). Every key is optional; see the plugin's README.md and
/// sample-config.json.
public struct FitnessOptions: Decodable, Sendable, Hashable {
    /// The wheel's circumference for wheel revolutions, millimetres (default 2105, a 700×25C
    /// road tyre).
    public var wheelCircumferenceMillimeters: Double
    /// A wheel or crank whose event time has not changed for this long is stopped (seconds).
    public var stopTimeoutSeconds: Double
    /// The simulated transport's devices and rate.
    public var simulation: FitnessSimulationSettings

    /// The options with every default.
    public init(
        wheelCircumferenceMillimeters: Double = 2105, stopTimeoutSeconds: Double = 3,
        simulation: FitnessSimulationSettings = FitnessSimulationSettings()
    ) {
        self.wheelCircumferenceMillimeters = wheelCircumferenceMillimeters
        self.stopTimeoutSeconds = stopTimeoutSeconds
        self.simulation = simulation
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case wheelCircumferenceMillimeters, stopTimeoutSeconds, simulation }

    /// Decodes the profile's keys of the `config` object.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = FitnessOptions()
        wheelCircumferenceMillimeters =
            try c.decodeIfPresent(Double.self, forKey: .wheelCircumferenceMillimeters) ?? defaults.wheelCircumferenceMillimeters
        stopTimeoutSeconds = try c.decodeIfPresent(Double.self, forKey: .stopTimeoutSeconds) ?? defaults.stopTimeoutSeconds
        simulation = try c.decodeIfPresent(FitnessSimulationSettings.self, forKey: .simulation) ?? defaults.simulation
    }

    /// The allowed `wheelCircumferenceMillimeters`: from a folding bike's 16-inch wheel to a
    /// fat bike's 29-inch one, with room.
    public static let wheelRange: ClosedRange<Double> = 500...3500
    /// The allowed `stopTimeoutSeconds`.
    public static let stopTimeoutRange: ClosedRange<Double> = 1...60

    /// Checks every value that decodes but cannot work; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validate(simulated: Bool) throws(PluginConfigurationError) {
        try PluginConfigurationError.check(
            "wheelCircumferenceMillimeters", wheelCircumferenceMillimeters, in: Self.wheelRange, unit: "millimetres")
        try PluginConfigurationError.check("stopTimeoutSeconds", stopTimeoutSeconds, in: Self.stopTimeoutRange, unit: "seconds")
        try PluginConfigurationError.check("simulation.bikes", simulation.bikes, in: BLESourceKeys.simulatedDevices)
        try PluginConfigurationError.check("simulation.rowers", simulation.rowers, in: BLESourceKeys.simulatedDevices)
        if simulated, simulation.bikes + simulation.rowers == 0 {
            throw PluginConfigurationError(keyPath: "simulation", reason: "simulates no device")
        }
    }

    /// The schema of the profile's keys.
    static var properties: [ConfigurationProperty] {
        let defaults = FitnessOptions()
        let simulation = FitnessSimulationSettings()
        return [
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
        ]
    }
}

extension BluetoothSourceConfiguration where Profile == FitnessProfile {
    /// A configuration from its keys, with every default.
    public init(
        transport: BLETransportChoice = .bluez, adapter: String? = nil, adapters: [String]? = nil,
        devices: DeviceSelection = .any, maxDevices: Int? = nil, reconnect: ReconnectPolicy = ReconnectPolicy(),
        wheelCircumferenceMillimeters: Double = 2105, stopTimeoutSeconds: Double = 3,
        simulation: FitnessSimulationSettings = FitnessSimulationSettings()
    ) {
        self.init(
            shared: BLESharedSettings(
                transport: transport, adapter: adapter, adapters: adapters, devices: devices, maxDevices: maxDevices,
                reconnect: reconnect),
            options: FitnessOptions(
                wheelCircumferenceMillimeters: wheelCircumferenceMillimeters, stopTimeoutSeconds: stopTimeoutSeconds,
                simulation: simulation))
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
