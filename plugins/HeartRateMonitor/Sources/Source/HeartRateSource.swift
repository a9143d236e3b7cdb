public import BLECentral
public import BLETransport
import HealthModel
public import GatewayRuntime
public import SampleBus
import FoundationEssentials

/// The `ble-heart-rate` source: Bluetooth LE heart-rate monitors (Heart Rate Service 0x180D) and
/// running foot pods (Running Speed and Cadence 0x1814).
///
/// `run` discovers devices with the transport (``PeripheralFollower``), checks each against its
/// own filter, and follows up to `maxDevices` of them, each in a child task that connects, reads
/// Device Information, battery and body sensor location, subscribes to the measurements and
/// reconnects forever with backoff (``PeripheralSession``). No Bluetooth is logged once and retried; it never ends
/// the source. Cancellation stops everything and flushes pending heartbeat series.
public struct HeartRateSource: BluetoothProfileSource {
    /// The `config` object; see ``HeartRateSourceConfiguration``.
    public typealias Configuration = HeartRateSourceConfiguration

    /// The plugin kind used in configuration files.
    public static let kind = "ble-heart-rate"
    /// One line for `healthgate plugins`.
    public static let summary = "Bluetooth LE heart-rate monitors and running foot pods (GATT 0x180D, 0x1814)."

    /// The validated configuration.
    public let configuration: HeartRateSourceConfiguration
    let environment: PluginEnvironment
    let radios: [PeripheralFollower.Radio]

    /// Builds the source from its settings (its configuration after `validated(in:)`): with
    /// `bluez`, a radio per adapter from the gateway's Bluetooth (``PluginEnvironment/bluetooth``,
    /// a scripted stack in tests); with `simulated`, the plugin's simulator. Checks nothing.
    public init(settings configuration: HeartRateSourceConfiguration, environment: PluginEnvironment) {
        switch configuration.transport {
        case .bluez:
            radios = PeripheralFollower.Radio.make(adapters: configuration.adapterNames, environment: environment)
        case .simulated:
            radios = [.unshared(
                SimulatedBLETransport(clock: environment.clock, settings: configuration.simulation), adapter: nil,
                connections: configuration.effectiveMaxDevices, environment: environment)]
        }
        self.configuration = configuration
        self.environment = environment
    }

    /// Discovers and follows devices until cancelled; see the type's documentation. Only
    /// cancellation ends it (it throws `CancellationError`): transport failures are retried.
    public func run(context: SourceContext) async throws {
        let follower = PeripheralFollower(
            radios: radios, filter: DeviceFilter(services: Self.services, selection: configuration.devices),
            maxDevices: configuration.effectiveMaxDevices, retry: configuration.reconnect)
        try await follower.run(context: context) { [configuration, ids = environment.ids] session in
            try await DeviceSession(session: session, configuration: configuration, ids: ids).run()
        }
    }

    /// Heart-rate monitors and foot pods (Heart Rate, Running Speed and Cadence).
    public static let deviceKinds = [
        BluetoothDeviceKind("heart-rate-monitor", advertising: .heartRateService),
        BluetoothDeviceKind("foot-pod", advertising: .runningSpeedAndCadenceService),
    ]
}
