public import BLETransport
public import GatewayRuntime
public import SampleBus

/// A catalog source built on the advertisement kit: what `healthgate demo` and `scan` learn
/// of it without importing its plugin.
public protocol AdvertisementSource: SampleSource {
    /// What the source hears, plural, as a sentence names them: `Xiaomi scales`. `healthgate
    /// --help` lists what the gateway reads from these.
    static var devicesRead: String { get }
    /// The source's entry in `healthgate demo`: its simulated advertisers.
    static var demo: AdvertisementSourceDemo { get }
    /// The last reading `advertisement` carries for this source, in words (`72 bpm, contact
    /// yes, battery ok`), for `healthgate scan`; nil when it is not the source's or carries none.
    static func reading(in advertisement: Advertisement) -> String?
}

/// A broadcast source in `healthgate demo`: its name and its `config` object (simulated
/// advertisers).
public struct AdvertisementSourceDemo: Sendable {
    /// The source's name in the demo's configuration: `demo-polar-broadcast`.
    public let name: String
    /// The source's `config` object.
    public let configuration: JSONValue

    /// A demo entry named `name` with `configuration`.
    public init(name: String, configuration: JSONValue) {
        self.name = name
        self.configuration = configuration
    }
}

extension PluginCatalog {
    /// The catalog's advertisement sources with their kinds, in catalog order.
    public var advertisementSources: [(kind: String, source: any AdvertisementSource.Type)] {
        entries.compactMap { entry in (entry.sourceType as? any AdvertisementSource.Type).map { (entry.kind, $0) } }
    }
}
