import BLETransport
public import BLEProfileKit
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

    /// A bike's speed, cadence and power sensors and a trainer.
    public static let maxDevicesWithBlueZ = 4

    /// One simulated bike.
    public static let demo: BluetoothProfileDemo? = BluetoothProfileDemo(name: "demo-bike")

    public static func follow(_ session: PeripheralSession, configuration: FitnessProfileConfiguration, environment: PluginEnvironment) async throws {
        try await FitnessSession(session: session, configuration: configuration, ids: environment.ids).run()
    }
}
