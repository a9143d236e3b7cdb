public import BLEProfileKit
import BLETransport
public import SampleBus

/// The `ble-cgm` source: continuous glucose monitors (Continuous Glucose Monitoring Service,
/// 0x181F), run by the profile kit's ``BluetoothSource``. Per connection, ``CGMSession`` reads
/// the sensor's features, status and session start, starts or stops its session and sets its
/// communication interval when the configuration asks, downloads the records it has not
/// delivered (Record Access Control Point, by time offset, from a checkpoint committed with the
/// records), and stores each record as `bloodGlucose` at the session's start plus its offset.
public typealias CGMSource = BluetoothSource<CGMProfile>

/// The `config` object of a `ble-cgm` source: the shared Bluetooth keys and ``CGMProfileConfiguration``.
public typealias CGMConfiguration = BluetoothSourceConfiguration<CGMProfile>

/// The continuous glucose monitor profile.
public enum CGMProfile: BluetoothProfile {
    public static let kind = "ble-cgm"
    public static let summary = "Bluetooth LE continuous glucose monitors (GATT 0x181F)."
    public static let deviceKinds = [BluetoothDeviceKind("continuous-glucose-monitor", advertising: .continuousGlucoseMonitoringService, called: "continuous glucose monitors")]

    public static let maxDevicesWithBlueZ = 4

    /// One simulated sensor, half an hour into its session.
    public static let demo: BluetoothProfileDemo? = BluetoothProfileDemo(name: "demo-cgm")

    public static func follow(_ session: PeripheralSession, configuration: CGMProfileConfiguration, environment: PluginEnvironment) async throws {
        try await CGMSession(session: session, configuration: configuration, clockTrust: environment.clockTrust).run()
    }
}
