import BLETransport
public import BLEProfileKit
public import SampleBus
import HealthModel

/// The `ble-health` source: Bluetooth LE weight scales (0x181D) and body composition analysers
/// (0x181B), blood pressure monitors (0x1810), thermometers (0x1809), pulse oximeters (0x1822)
/// and glucose meters (0x1808), run by the profile kit's ``BluetoothSource``. Per connection,
/// ``HealthSession`` reads Device Information, the battery and the device's clock, subscribes to
/// the measurements the device has (the profiles indicate them; BlueZ confirms each indication),
/// asks a glucose meter for its stored records, and maps every measurement through
/// ``ClinicalRecordMapper``.
public typealias HealthDeviceSource = BluetoothSource<HealthProfile>

/// The `config` object of a `ble-health` source: the shared Bluetooth keys and ``HealthProfileConfiguration``.
public typealias HealthDeviceConfiguration = BluetoothSourceConfiguration<HealthProfile>

/// The scale, cuff, thermometer, oximeter and glucose meter profile.
public enum HealthProfile: BluetoothProfile {
    public static let kind = "ble-health"
    public static let summary =
        "Bluetooth LE scales, body composition analysers, blood pressure monitors, thermometers, pulse oximeters, glucose meters (GATT 0x181D, 0x181B, 0x1810, 0x1809, 0x1822, 0x1808)."

    /// Scales, body composition analysers, cuffs, thermometers, oximeters and glucose meters.
    public static let deviceKinds = [
        BluetoothDeviceKind("scale", advertising: .weightScaleService, called: "scales"),
        BluetoothDeviceKind("body-composition-analyser", advertising: .bodyCompositionService, called: "body composition analysers"),
        BluetoothDeviceKind("blood-pressure-monitor", advertising: .bloodPressureService, called: "blood pressure monitors"),
        BluetoothDeviceKind("thermometer", advertising: .healthThermometerService, called: "thermometers"),
        BluetoothDeviceKind("pulse-oximeter", advertising: .pulseOximeterService, called: "pulse oximeters"),
        BluetoothDeviceKind("glucose-meter", advertising: .glucoseService, called: "glucose meters"),
    ]

    public static let maxDevicesWithBlueZ = 4

    /// One simulated device of each kind (the `simulation` block's defaults).
    public static let demo: BluetoothProfileDemo? = BluetoothProfileDemo(name: "demo-health")

    public static func follow(_ session: PeripheralSession, configuration: HealthProfileConfiguration, environment: PluginEnvironment) async throws {
        try await HealthSession(
            session: session, ids: environment.ids, profileHeight: environment.user.heightMeters, clockTrust: environment.clockTrust
        ).run()
    }
}
