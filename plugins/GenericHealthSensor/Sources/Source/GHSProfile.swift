public import BLEProfileKit
import BLETransport
public import SampleBus

/// The `ble-ghs` source: Bluetooth LE Generic Health Sensors (GHS 1.0, 0x1840), any sensor
/// whose observations are IEEE 11073-10206 (ACOM) objects named by MDC codes, run by the profile
/// kit's ``BluetoothSource``. Per connection, ``GHSSession`` reads Health Sensor Features and the
/// LE GATT Security Levels, subscribes to Live and Stored Health Observations and both control
/// points, downloads the observations the sensor stored since the checkpoint (Record Access
/// Control Point), asks for live observations (GHS Control Point), reassembles each segmented
/// observation, and publishes what ``GHSObservationMapper`` makes of it.
public typealias GHSSource = BluetoothSource<GHSProfile>

/// The `config` object of a `ble-ghs` source: the shared Bluetooth keys and ``GHSProfileConfiguration``.
public typealias GHSConfiguration = BluetoothSourceConfiguration<GHSProfile>

/// The Generic Health Sensor profile.
public enum GHSProfile: BluetoothProfile {
    public static let kind = "ble-ghs"
    public static let summary = "Bluetooth LE Generic Health Sensors: IEEE 11073-10206 observations from any sensor kind (GATT 0x1840)."
    public static let deviceKinds = [
        BluetoothDeviceKind("generic-health-sensor", advertising: .genericHealthSensorService, called: "generic health sensors")
    ]

    public static let maxDevicesWithBlueZ = 4

    /// One simulated pulse oximeter and one blood pressure monitor.
    public static let demo: BluetoothProfileDemo? = BluetoothProfileDemo(name: "demo-ghs")

    /// `healthgate decode ghs-observation`, `ghs-features`, `ghs-schedule`.
    public static var payloadDecoders: [PayloadDecoder] { GHSPayloadDecoders.all }

    public static func follow(_ session: PeripheralSession, configuration: GHSProfileConfiguration, environment: PluginEnvironment) async throws {
        try await GHSSession(session: session, configuration: configuration).run()
    }
}
