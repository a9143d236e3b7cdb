public import BLEProfileKit
import BLETransport
public import SampleBus

/// The `ble-heart-rate` source: Bluetooth LE heart-rate monitors (Heart Rate Service 0x180D) and
/// running foot pods (Running Speed and Cadence 0x1814), run by the profile kit's
/// ``BluetoothSource``. Per connection, ``DeviceSession`` reads Device Information, battery and
/// body sensor location, subscribes to the measurements and maps them; cancellation flushes
/// pending heartbeat series.
public typealias HeartRateSource = BluetoothSource<HeartRateProfile>

/// The `config` object of a `ble-heart-rate` source: the shared Bluetooth keys and
/// ``HeartRateProfileConfiguration``.
public typealias HeartRateSourceConfiguration = BluetoothSourceConfiguration<HeartRateProfile>

/// The heart-rate and running profile.
public enum HeartRateProfile: BluetoothProfile {
    public static let kind = "ble-heart-rate"
    public static let summary = "Bluetooth LE heart-rate monitors and running foot pods (GATT 0x180D, 0x1814)."

    /// Heart-rate monitors and foot pods (Heart Rate, Running Speed and Cadence).
    public static let deviceKinds = [
        BluetoothDeviceKind("heart-rate-monitor", advertising: .heartRateService, called: "heart-rate monitors"),
        BluetoothDeviceKind("foot-pod", advertising: .runningSpeedAndCadenceService, called: "foot pods"),
    ]

    public static let maxDevicesWithBlueZ = 1

    /// One simulated heart-rate monitor at the default rate.
    public static let demo: BluetoothProfileDemo? = BluetoothProfileDemo(name: "demo-heart-rate")

    public static func follow(_ session: PeripheralSession, configuration: HeartRateProfileConfiguration, environment: PluginEnvironment) async throws {
        try await DeviceSession(session: session, configuration: configuration, ids: environment.ids, clockTrust: environment.clockTrust).run()
    }
}
