public import GatewayRuntime
public import SampleBus

/// A source that reads a kind of serial (tty) device: a member of the serial device family. The
/// executable finds these among the catalog's sources (``PluginCatalog/serialSources``), so
/// `healthgate devices` judges every tty against every compiled-in member and `healthgate demo`
/// starts every member's simulator, without importing a member.
///
/// Adding a member is one folder under plugins/ and one line in the catalog.
public protocol SerialDeviceFamilySource: SampleSource, ConfigurablePlugin {
    /// What the source reads and how they are attached, plural, as a sentence names them:
    /// `ANT+ heart-rate straps through a USB ANT stick`. `healthgate --help` lists these.
    static var devicesRead: String { get }
    /// Which udev-tagged ttys the source reads with `"udev": true`.
    static var udevMatch: SerialDeviceMatch { get }
    /// How `healthgate demo` runs the source, if it does.
    static var demo: SerialDeviceDemo? { get }
    /// What `healthgate scan --kind NAME` lists through the member's devices, if anything.
    static var scan: SerialDeviceScan? { get }
}

extension SerialDeviceFamilySource {
    /// Not in the demo.
    public static var demo: SerialDeviceDemo? { nil }
    /// No scan.
    public static var scan: SerialDeviceScan? { nil }
}

/// A serial member's entry in `healthgate demo`: a simulated device on a real pseudo-terminal,
/// started beside the gateway.
public struct SerialDeviceDemo: Sendable {
    /// The source's name in the demo's configuration: `demo-pedometer`.
    public let name: String
    /// What is simulated, for messages: `pedometer`.
    public let device: String
    /// Opens the simulated device (its pty) and returns the source's `config` object, which
    /// points at it, and the device side's loop, which the demo runs beside the gateway until
    /// cancelled. Throws when the pseudo-terminal cannot be opened.
    public let start: @Sendable (_ clock: any GatewayClock, _ logger: Logger) throws -> SerialDeviceDemoRun
    /// For a member that simulates a class of wearable devices (ANT+ straps through one stick):
    /// starts it with `count` of them, like ``start`` otherwise (`healthgate demo --class N`).
    /// Nil: the member has no class to offer.
    public let startClass: (@Sendable (_ count: Int, _ clock: any GatewayClock, _ logger: Logger) throws -> SerialDeviceDemoRun)?
    /// How many wearable devices ``startClass`` can simulate at most.
    public let classLimit: Int

    public init(
        name: String, device: String,
        start: @escaping @Sendable (_ clock: any GatewayClock, _ logger: Logger) throws -> SerialDeviceDemoRun,
        classLimit: Int = 0,
        startClass: (@Sendable (_ count: Int, _ clock: any GatewayClock, _ logger: Logger) throws -> SerialDeviceDemoRun)? = nil
    ) {
        self.name = name
        self.device = device
        self.start = start
        self.classLimit = classLimit
        self.startClass = startClass
    }
}

/// A started serial demo device: the source's `config` object and the device side's loop.
public struct SerialDeviceDemoRun: Sendable {
    /// The `config` object of a source reading the simulated device.
    public let configuration: JSONValue
    /// The local identifiers of the wearable devices it simulates (a class of heart-rate straps),
    /// as their samples carry them: the demo gives each to a participant of its own, so each shows
    /// on the board as its own tile and has its own workout instead of joining another's.
    public let wornDevices: [String]
    /// Plays the device until cancelled, then hangs up.
    public let run: @Sendable () async throws -> Void

    public init(configuration: JSONValue, wornDevices: [String] = [], run: @escaping @Sendable () async throws -> Void) {
        self.configuration = configuration
        self.wornDevices = wornDevices
        self.run = run
    }
}

extension PluginCatalog {
    /// The catalog's serial family sources with their kinds, in catalog order: how `devices` and
    /// `demo` learn the members.
    public var serialSources: [(kind: String, source: any SerialDeviceFamilySource.Type)] {
        entries.compactMap { entry in
            (entry.sourceType as? any SerialDeviceFamilySource.Type).map { (entry.kind, $0) }
        }
    }

    /// What the catalog's serial members read through udev, in catalog order.
    public var serialDeviceMatches: [SerialDeviceMatch] {
        serialSources.map { $0.source.udevMatch }
    }
}
