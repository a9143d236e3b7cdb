public import BLECentral
public import BLETransport
public import GatewayRuntime
public import SampleBus

/// The `ble-cgm` source: continuous glucose monitors (Continuous Glucose Monitoring Service,
/// 0x181F), run by the profile kit's ``BluetoothSource``. Per connection, ``CGMSession`` reads
/// the sensor's features, status and session start, starts or stops its session and sets its
/// communication interval when the configuration asks, downloads the records it has not
/// delivered (Record Access Control Point, by time offset, from a checkpoint committed with the
/// records), and stores each record as `bloodGlucose` at the session's start plus its offset.
public typealias CGMSource = BluetoothSource<CGMProfile>

/// The `config` object of a `ble-cgm` source: the shared Bluetooth keys and ``CGMOptions``.
public typealias CGMConfiguration = BluetoothSourceConfiguration<CGMProfile>

/// The continuous glucose monitor profile.
public enum CGMProfile: BluetoothProfile {
    public static let kind = "ble-cgm"
    public static let summary = "Bluetooth LE continuous glucose monitors (GATT 0x181F)."
    public static let deviceKinds = [BluetoothDeviceKind("continuous-glucose-monitor", advertising: .continuousGlucoseMonitoringService, called: "continuous glucose monitors")]

    public static var defaultOptions: CGMOptions { CGMOptions() }
    public static var optionProperties: [ConfigurationProperty] { CGMOptions.properties }
    public static let maxDevicesDefault = "4 with bluez, every simulated sensor when simulated"

    public static func defaultMaxDevices(_ options: CGMOptions, simulated: Bool) -> Int {
        simulated ? options.simulation.sensors : 4
    }

    /// The simulated sensors take a record every `recordIntervalMinutes`, not at a rate.
    public static func notificationsPerSecond(_ options: CGMOptions) -> Double? { nil }

    public static func validate(_ options: CGMOptions, simulated: Bool) throws(PluginConfigurationError) {
        try options.validate(simulated: simulated)
    }

    public static func simulator(_ options: CGMOptions, clock: any GatewayClock) -> any BLECentralTransport {
        SimulatedCGMTransport(clock: clock, settings: options.simulation)
    }

    /// One simulated sensor, half an hour into its session.
    public static var demo: BluetoothProfileDemo? {
        BluetoothProfileDemo(
            name: "demo-cgm",
            configuration: .object(["transport": .string("simulated"), "simulation": .object(["sensors": .number(1)])]))
    }

    public static func follow(_ session: PeripheralSession, options: CGMOptions, environment: PluginEnvironment) async throws {
        try await CGMSession(session: session, options: options, clockTrust: environment.clockTrust).run()
    }
}
