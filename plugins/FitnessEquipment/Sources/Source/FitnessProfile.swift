public import BLETransport
public import BLEProfileKit
public import GatewayRuntime
public import SampleBus

/// The `ble-fitness` source: Bluetooth LE cycling speed and cadence sensors (0x1816), power
/// meters (0x1818) and fitness machines (0x1826: treadmills, indoor bikes, rowers), run by the
/// profile kit's ``BluetoothSource``. Per connection, ``FitnessSession`` reads Device
/// Information and the battery, subscribes to every measurement the device has and maps the
/// notifications through ``FitnessRecordMapper``.
public typealias FitnessEquipmentSource = BluetoothSource<FitnessProfile>

/// The `config` object of a `ble-fitness` source: the shared Bluetooth keys and
/// ``FitnessProfileConfiguration``.
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

    public static let maxDevicesDefault = "4 with bluez, every simulated device when simulated"

    /// A bike's speed, cadence and power sensors and a trainer; every simulated device.
    public static func defaultMaxDevices(_ configuration: FitnessProfileConfiguration, simulated: Bool) -> Int {
        simulated ? configuration.simulation.bikes + configuration.simulation.rowers : 4
    }

    public static func validate(_ configuration: FitnessProfileConfiguration, simulated: Bool) throws(PluginConfigurationError) {
        try configuration.validate(simulated: simulated)
    }

    public static func simulator(_ configuration: FitnessProfileConfiguration, clock: any GatewayClock) -> any BLECentralTransport {
        SimulatedFitnessTransport(clock: clock, settings: configuration.simulation)
    }

    /// One simulated bike.
    public static var demo: BluetoothProfileDemo? {
        BluetoothProfileDemo(name: "demo-bike", configuration: FitnessEquipmentSource.demoConfiguration())
    }

    public static func follow(_ session: PeripheralSession, configuration: FitnessProfileConfiguration, environment: PluginEnvironment) async throws {
        try await FitnessSession(session: session, configuration: configuration, ids: environment.ids).run()
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
