public import BLECentral
public import BLETransport
import FoundationEssentials
import HealthModel
public import GatewayRuntime
public import SampleBus

/// The `ble-health` source: Bluetooth LE weight scales (0x181D), blood pressure monitors
/// (0x1810), thermometers (0x1809), pulse oximeters (0x1822) and glucose meters (0x1808).
///
/// `run` discovers devices with the transport (``PeripheralFollower``) and follows up to
/// `maxDevices` of them (``PeripheralSession``: connect, reconnect with backoff). Per connection,
/// ``HealthSession`` reads Device Information, the battery and the device's clock, subscribes to
/// the measurements the device has (the profiles indicate them; BlueZ confirms each indication),
/// asks a glucose meter for its stored records, and maps every measurement through
/// ``ClinicalRecordMapper``. Only cancellation ends it.
public struct HealthDeviceSource: BluetoothProfileSource {
    /// The `config` object; see ``HealthDeviceConfiguration``.
    public typealias Configuration = HealthDeviceConfiguration

    /// The plugin kind used in configuration files.
    public static let kind = "ble-health"
    /// One line for `healthgate plugins`.
    public static let summary =
        "Bluetooth LE scales, body composition analysers, blood pressure monitors, thermometers, pulse oximeters, glucose meters (GATT 0x181D, 0x181B, 0x1810, 0x1809, 0x1822, 0x1808)."

    /// Scales, body composition analysers, cuffs, thermometers, oximeters and glucose meters.
    public static let deviceKinds = [
        BluetoothDeviceKind("scale", advertising: .weightScaleService),
        BluetoothDeviceKind("body-composition-analyser", advertising: .bodyCompositionService),
        BluetoothDeviceKind("blood-pressure-monitor", advertising: .bloodPressureService),
        BluetoothDeviceKind("thermometer", advertising: .healthThermometerService),
        BluetoothDeviceKind("pulse-oximeter", advertising: .pulseOximeterService),
        BluetoothDeviceKind("glucose-meter", advertising: .glucoseService),
    ]

    /// The validated configuration.
    public let configuration: HealthDeviceConfiguration
    let environment: PluginEnvironment
    let radios: [PeripheralFollower.Radio]

    /// Builds the source from its settings (its configuration after `validated(in:)`): with
    /// `bluez`, a radio per adapter from the gateway's Bluetooth (``PluginEnvironment/bluetooth``,
    /// a scripted stack in tests); with `simulated`, the plugin's simulator. Checks nothing.
    public init(settings configuration: HealthDeviceConfiguration, environment: PluginEnvironment) {
        switch configuration.transport {
        case .bluez:
            radios = PeripheralFollower.Radio.make(adapters: configuration.adapterNames, environment: environment)
        case .simulated:
            radios = [.unshared(
                SimulatedHealthTransport(clock: environment.clock, settings: configuration.simulation), adapter: nil,
                connections: configuration.effectiveMaxDevices, environment: environment)]
        }
        self.configuration = configuration
        self.environment = environment
    }

    /// A configuration for `healthgate demo`: one simulated device of each kind (scale, cuff,
    /// thermometer, pulse oximeter, glucose meter) measuring every `intervalSeconds`.
    public static func demoConfiguration(intervalSeconds: Double = 20) -> JSONValue {
        .object([
            "transport": .string("simulated"),
            "simulation": .object([
                "scales": .number(1), "cuffs": .number(1), "thermometers": .number(1), "oximeters": .number(1),
                "glucoseMeters": .number(1), "measurementIntervalSeconds": .number(intervalSeconds),
            ]),
        ])
    }

    /// Discovers and follows devices until cancelled (then throws `CancellationError`).
    public func run(context: SourceContext) async throws {
        let follower = PeripheralFollower(
            radios: radios, filter: DeviceFilter(services: Self.services, selection: configuration.devices),
            maxDevices: configuration.effectiveMaxDevices, retry: configuration.reconnect)
        try await follower.run(context: context) { [ids = environment.ids, height = environment.user.heightMeters] session in
            try await HealthSession(session: session, ids: ids, profileHeight: height).run()
        }
    }
}
