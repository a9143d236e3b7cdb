public import BLETransport
public import GatewayRuntime
public import SampleBus

/// What a Bluetooth LE plugin declares to become a source: the kinds of device it reads, its
/// configuration keys beyond the shared ones, its simulator, and what following one device
/// means. ``BluetoothSource`` owns the rest: the shared keys (``BluetoothSharedConfiguration``)
/// and their checks, discovery across adapters, the connect and reconnect loop, the adapters'
/// slots.
///
/// A new profile is a folder under plugins/ with a type conforming to this protocol, a line
/// `.source(BluetoothSource<MyProfile>.self)` in the catalog, and its Package.swift target.
public protocol BluetoothProfile: Sendable {
    /// The profile's own `config` keys (`simulation` among them), each declared once, decoded
    /// from the same object as the shared keys; every key optional, its default the value
    /// `init()` gives it.
    associatedtype Configuration: DeclaredConfiguration & Hashable

    /// The plugin kind used in configuration files: `ble-heart-rate`.
    static var kind: String { get }
    /// One line for `healthgate plugins`.
    static var summary: String { get }
    /// The kinds of device the profile reads, by the service each advertises.
    static var deviceKinds: [BluetoothDeviceKind] { get }
    /// How many devices are followed at once when `maxDevices` is absent, as the schema says
    /// it; and the number itself.
    static var maxDevicesDefault: String { get }
    static func defaultMaxDevices(_ configuration: Configuration, simulated: Bool) -> Int
    /// Checks what ties the profile's keys together, or to the transport (their ranges are
    /// declared); no I/O. `simulated` is whether `transport` is `simulated`.
    /// - Throws: ``PluginConfigurationError`` naming the key inside `config`.
    static func validate(_ configuration: Configuration, simulated: Bool) throws(PluginConfigurationError)
    /// The profile's simulated transport (`transport: "simulated"`), on `clock`.
    static func simulator(_ configuration: Configuration, clock: any GatewayClock) -> any BLECentralTransport
    /// The decoders `healthgate decode` offers for the profile's characteristics.
    static var payloadDecoders: [PayloadDecoder] { get }
    /// How `healthgate demo` runs the profile's simulator: a source name and its `config`
    /// (`transport: "simulated"` and the simulation); nil keeps the profile out of the demo.
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
}

/// A profile's entry in `healthgate demo`.
public struct BluetoothProfileDemo: Sendable {
    /// The source's name in the demo's configuration: `demo-heart-rate`.
    public let name: String
    /// The source's `config` object.
    public let configuration: JSONValue

    public init(name: String, configuration: JSONValue) {
        self.name = name
        self.configuration = configuration
    }
}
