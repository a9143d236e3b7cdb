public import GatewayRuntime
public import SampleBus

/// What a Bluetooth LE plugin declares to become a source: the kinds of device it reads, its
/// configuration keys beyond the shared ones (with its simulator, their `simulation` block), and
/// what following one device means. ``BluetoothSource`` owns the rest: the shared keys
/// (``BluetoothSharedConfiguration``) and their checks, `maxDevices`' default, the simulated
/// transport, discovery across adapters, the connect and reconnect loop, the adapters' slots.
///
/// A new profile is a folder under plugins/ with a type conforming to this protocol, a line
/// `.source(BluetoothSource<MyProfile>.self)` in the catalog, and its Package.swift target.
public protocol BluetoothProfile: Sendable {
    /// The profile's own `config` keys (`simulation` among them), each declared once, decoded
    /// from the same object as the shared keys; every key optional, its default the value
    /// `init()` gives it.
    associatedtype Configuration: BluetoothProfileConfiguration

    /// The plugin kind used in configuration files: `ble-heart-rate`.
    static var kind: String { get }
    /// One line for `healthgate plugins`.
    static var summary: String { get }
    /// The kinds of device the profile reads, by the service each advertises.
    static var deviceKinds: [BluetoothDeviceKind] { get }
    /// How many devices are followed at once with `bluez` when `maxDevices` is absent; with
    /// `simulated`, every simulated device is.
    static var maxDevicesWithBlueZ: Int { get }
    /// The decoders `healthgate decode` offers for the profile's characteristics.
    static var payloadDecoders: [PayloadDecoder] { get }
    /// How `healthgate demo` runs the profile's simulator; nil keeps the profile out of the demo.
    static var demo: BluetoothProfileDemo? { get }
    /// Follows one device until cancelled: the session connects and reconnects
    /// (``PeripheralSession/run(follow:)``); what is done per connection is the profile's.
    static func follow(_ session: PeripheralSession, configuration: Configuration, environment: PluginEnvironment) async throws
}

extension BluetoothProfile {
    /// No decoders of its own.
    public static var payloadDecoders: [PayloadDecoder] { [] }
    /// Not in the demo.
    public static var demo: BluetoothProfileDemo? { nil }

    /// `maxDevices`' default in words, as the schema states it.
    static var maxDevicesDefault: String { "\(maxDevicesWithBlueZ) with bluez, every simulated device when simulated" }
}

/// A profile's entry in `healthgate demo`: its simulator with the `simulation` block's defaults.
public struct BluetoothProfileDemo: Sendable {
    /// The source's name in the demo's configuration: `demo-heart-rate`.
    public let name: String

    /// The entry of the source named `name`.
    public init(name: String) {
        self.name = name
    }

    /// The source's `config` object: the simulated transport, every other key at its default.
    public var configuration: JSONValue { .object(["transport": BLETransportChoice.simulated.configurationJSON]) }
}
