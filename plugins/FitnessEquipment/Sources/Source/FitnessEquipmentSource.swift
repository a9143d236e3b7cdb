public import BLECentral
public import BLETransport
import FoundationEssentials
import HealthModel
public import GatewayRuntime
public import SampleBus

/// The `ble-fitness` source: Bluetooth LE cycling speed and cadence sensors (0x1816), power
/// meters (0x1818) and fitness machines (0x1826: treadmills, indoor bikes, rowers).
///
/// `run` discovers devices with the transport (``PeripheralFollower``) and follows up to
/// `maxDevices` of them at once, each in its own task (``PeripheralSession``: connect, reconnect
/// with backoff). Per connection, ``FitnessSession`` reads Device Information and the battery,
/// subscribes to every measurement the device has and maps the notifications through
/// ``FitnessRecordMapper``. Only cancellation ends it.
public struct FitnessEquipmentSource: BluetoothProfileSource {
    /// The `config` object; see ``FitnessEquipmentConfiguration``.
    public typealias Configuration = FitnessEquipmentConfiguration

    /// The plugin kind used in configuration files.
    public static let kind = "ble-fitness"
    /// One line for `healthgate plugins`.
    public static let summary =
        "Bluetooth LE bike sensors, power meters and fitness machines (GATT 0x1816, 0x1818, 0x1826)."

    /// Bike sensors, power meters and fitness machines.
    public static let deviceKinds = [
        BluetoothDeviceKind("speed-cadence-sensor", advertising: .cyclingSpeedAndCadenceService),
        BluetoothDeviceKind("power-meter", advertising: .cyclingPowerService),
        BluetoothDeviceKind("fitness-machine", advertising: .fitnessMachineService),
    ]

    /// The validated configuration.
    public let configuration: FitnessEquipmentConfiguration
    let environment: PluginEnvironment
    let radios: [PeripheralFollower.Radio]

    /// Builds the source from its settings (its configuration after `validated(in:)`): with
    /// `bluez`, a radio per adapter from the gateway's Bluetooth (``PluginEnvironment/bluetooth``,
    /// a scripted stack in tests); with `simulated`, the plugin's simulator. Checks nothing.
    public init(settings configuration: FitnessEquipmentConfiguration, environment: PluginEnvironment) {
        switch configuration.transport {
        case .bluez:
            radios = PeripheralFollower.Radio.make(adapters: configuration.adapterNames, environment: environment)
        case .simulated:
            radios = [.unshared(
                SimulatedFitnessTransport(clock: environment.clock, settings: configuration.simulation), adapter: nil,
                connections: configuration.effectiveMaxDevices, environment: environment)]
        }
        self.configuration = configuration
        self.environment = environment
    }

    /// A configuration for `healthgate demo`: the simulated transport with `bikes` bikes.
    public static func demoConfiguration(bikes: Int = 1, notificationsPerSecond: Double = 1) -> JSONValue {
        .object([
            "transport": .string("simulated"),
            "simulation": .object([
                "bikes": .number(Double(bikes)), "notificationsPerSecond": .number(notificationsPerSecond),
            ]),
        ])
    }

    /// Discovers and follows devices until cancelled (then throws `CancellationError`).
    public func run(context: SourceContext) async throws {
        let follower = PeripheralFollower(
            radios: radios, filter: DeviceFilter(services: Self.services, selection: configuration.devices),
            maxDevices: configuration.effectiveMaxDevices, retry: configuration.reconnect)
        try await follower.run(context: context) { [configuration, ids = environment.ids] session in
            try await FitnessSession(session: session, configuration: configuration, ids: ids).run()
        }
    }
}
