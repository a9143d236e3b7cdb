public import BLETransport
public import SampleBus

/// A kind of device a Bluetooth LE source reads, known by the service it advertises: how
/// `healthgate scan` names what it finds and what `--kind` selects.
public struct BluetoothDeviceKind: Sendable, Hashable {
    /// The kebab-case name `scan --kind` takes and prints: `heart-rate-monitor`.
    public let name: String
    /// The service such a device advertises.
    public let service: BluetoothUUID
    /// What such devices are called in a sentence, plural: `heart-rate monitors`. `healthgate
    /// --help` lists what the gateway reads from these.
    public let plural: String

    public init(_ name: String, advertising service: BluetoothUUID, called plural: String) {
        self.name = name
        self.service = service
        self.plural = plural
    }
}

/// A source that follows Bluetooth LE devices by the services they advertise. The executable
/// finds these among the catalog's sources (``PluginCatalogEntry/sourceType``), so `scan` lists
/// what every compiled-in Bluetooth source reads without a list of its own.
public protocol BluetoothProfileSource: SampleSource, ConfigurablePlugin, PayloadDecoding {
    /// The kinds of device the source reads; a device advertising any of their services is one.
    static var deviceKinds: [BluetoothDeviceKind] { get }
    /// How `healthgate demo` runs the source, if it does.
    static var demo: BluetoothProfileDemo? { get }
    /// Builds the source from validated settings with the gateway's Bluetooth adapters, which
    /// every Bluetooth LE source on an adapter shares.
    init(settings: Configuration.Settings, environment: PluginEnvironment, bluetooth: BluetoothAdapters) throws
}

extension PluginCatalogEntry {
    /// A catalog entry for a Bluetooth LE source built with the gateway's adapters: the executable
    /// makes `bluetooth` once per run (with the configuration's `bluetooth.adapterLimits`) and
    /// every Bluetooth source shares its schedulers. Nil: each source gets adapters of its own
    /// with the default limits (a catalog that only validates, lists or describes plugins).
    public static func bluetoothSource<P: BluetoothProfileSource>(
        _ plugin: P.Type, bluetooth: BluetoothAdapters?
    ) -> PluginCatalogEntry {
        source(P.self) { settings, environment in
            try P(settings: settings, environment: environment, bluetooth: bluetooth ?? BluetoothAdapters(clock: environment.clock))
        }
    }
}

extension BluetoothProfileSource {
    /// The services a followed device advertises (one is enough): the kinds' services.
    public static var services: [BluetoothUUID] { deviceKinds.map(\.service) }
}

extension PluginCatalog {
    /// The catalog's Bluetooth LE sources with their kinds, in catalog order: how `scan`,
    /// `decode`, `demo` and the fuzz targets learn the profiles.
    public var bluetoothSources: [(kind: String, source: any BluetoothProfileSource.Type)] {
        entries.compactMap { entry in
            (entry.sourceType as? any BluetoothProfileSource.Type).map { (entry.kind, $0) }
        }
    }
}
