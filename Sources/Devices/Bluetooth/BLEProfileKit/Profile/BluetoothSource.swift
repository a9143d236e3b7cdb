public import BLETransport
import GatewayRuntime
public import SampleBus

/// The one source every Bluetooth LE profile runs as: discovers devices advertising the
/// profile's services on each configured adapter (``PeripheralSupervisor``), follows up to
/// `maxDevices` of them, each in its own task that connects, reconnects with backoff and hands
/// every connection to the profile (``BluetoothProfile/follow(_:configuration:environment:)``). With
/// `transport: "simulated"` the profile's simulated devices (its `simulation` block,
/// ``SimulatedCentralTransport``) stand in for Bluetooth. No Bluetooth is
/// logged once and retried; only cancellation ends `run`.
public struct BluetoothSource<Profile: BluetoothProfile>: BluetoothProfileSource {
    public typealias Configuration = BluetoothSourceConfiguration<Profile>

    public static var kind: String { Profile.kind }
    public static var summary: String { Profile.summary }
    public static var deviceKinds: [BluetoothDeviceKind] { Profile.deviceKinds }
    public static var payloadDecoders: [PayloadDecoder] { Profile.payloadDecoders }
    public static var demo: BluetoothProfileDemo? { Profile.demo }

    /// The validated configuration.
    public let configuration: Configuration
    let environment: PluginEnvironment
    /// The simulator's radio; nil with `bluez`, whose radios are chosen when the source starts.
    let simulatedRadio: PeripheralSupervisor.Radio?
    let bluetooth: BluetoothAdapters

    /// Builds the source from its settings (its configuration after `validated(in:)`): with
    /// `bluez`, a radio per adapter (chosen when it runs: its `adapters` or `adapter`, else the
    /// gateway's `bluetooth.adapters`, `all` listed then) from the gateway's Bluetooth (`bluetooth`, one per run made
    /// by the executable and handed over by the catalog entry, ``PluginCatalogEntry/bluetoothSource(_:bluetooth:)``;
    /// a scripted stack in tests); with `simulated`, the profile's simulated devices. Checks nothing.
    public init(settings configuration: Configuration, environment: PluginEnvironment, bluetooth: BluetoothAdapters) {
        switch configuration.shared.transport {
        case .bluez:
            simulatedRadio = nil
        case .simulated:
            simulatedRadio = .unshared(
                SimulatedCentralTransport(clock: environment.clock, settings: configuration.profile.simulation), adapter: nil,
                connections: configuration.effectiveMaxDevices, bluetooth: bluetooth, environment: environment)
        }
        self.configuration = configuration
        self.environment = environment
        self.bluetooth = bluetooth
    }

    /// Builds the source with Bluetooth adapters of its own, with the default limits: for a
    /// source built without the gateway's (``BluetoothAdapters/init(limits:clock:transport:watchdog:)``).
    public init(settings configuration: Configuration, environment: PluginEnvironment) {
        self.init(settings: configuration, environment: environment, bluetooth: BluetoothAdapters(clock: environment.clock))
    }

    /// Discovers and follows devices until cancelled (then throws `CancellationError`).
    public func run(context: SourceContext) async throws {
        let radios: [PeripheralSupervisor.Radio]
        if let simulatedRadio {
            radios = [simulatedRadio]
        } else {
            // The source's adapters, else the gateway's; `all` is what BlueZ has now.
            let selection = configuration.shared.adapterSelection ?? bluetooth.defaultAdapters
            let names = await bluetooth.resolve(configuration.shared.adapterSelection)
            if selection == .all {
                context.logger.info("adapters: all, now \(names.map { $0 ?? "the first BlueZ lists" }.joined(separator: ", "))")
            }
            radios = PeripheralSupervisor.Radio.make(adapters: names, bluetooth: bluetooth)
        }
        let supervisor = PeripheralSupervisor(
            radios: radios, filter: DeviceFilter(services: Self.services, selection: configuration.shared.devices),
            maxDevices: configuration.effectiveMaxDevices, retry: configuration.shared.reconnect)
        try await supervisor.run(context: context) { [profile = configuration.profile, environment] session in
            try await Profile.follow(session, configuration: profile, environment: environment)
        }
    }
}
