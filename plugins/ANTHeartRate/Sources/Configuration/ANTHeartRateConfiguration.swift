public import ANTProtocol
import FoundationEssentials
public import GatewayRuntime
public import SampleBus
public import SerialDevices

/// Where an `ant-heart-rate` source's stick is: a real USB ANT stick, or a simulated one on a
/// pseudo-terminal.
public enum ANTTransportChoice: String, Sendable, Hashable, ConfigurationChoice {
    /// A USB ANT stick: `path`, or every stick udev tags (the default).
    case stick
    /// A simulated stick with `simulation.straps` straps (`healthgate demo`, tests).
    case simulated
}

/// The `config` object of an `ant-heart-rate` source (documented key by key in
/// plugins/ANTHeartRate/sample-config.json and README.md). Each key is declared once, in
/// ``configurationKeys``; a key's default is the value `init()` gives it.
public struct ANTHeartRateConfiguration: Sendable, Hashable, PluginConfigurationContract, DeclaredConfiguration {
    /// A stick or a simulated one.
    public var transport = ANTTransportChoice.stick
    /// The stick's tty (`/dev/healthgate/ant-<serial>`); nil: every stick udev tags.
    public var path: String?
    /// The file holding the ANT+ network key (8 bytes as hex); nil: `ant-network-key` in the
    /// configuration directory (``defaultNetworkKeyFile(variables:)``).
    public var networkKeyFile: String?
    /// A strap silent this long is lost.
    public var lostAfterSeconds: Double = 5
    /// A heartbeat series is published at least this often…
    public var heartbeatSeriesSeconds: Double = 60
    /// …or once it holds this many beats.
    public var heartbeatSeriesMaxBeats = 300
    /// The simulated stick's straps (`transport: simulated`).
    public var simulation = ANTSimulationConfiguration()

    /// Every key at its default.
    public init() {}

    /// The allowed `lostAfterSeconds`.
    public static let lostAfterRange: ClosedRange<Double> = 1...600
    /// The allowed `heartbeatSeriesSeconds`.
    public static let seriesSecondsRange: ClosedRange<Double> = 1...3600
    /// The allowed `heartbeatSeriesMaxBeats`.
    public static let seriesBeatsRange = 1...100_000
    /// The key file's name in the configuration directory.
    public static let defaultNetworkKeyFileName = "ant-network-key"

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey("transport", \.transport, ANTTransportChoice.configurationShape, "A USB ANT stick, or a simulated one"),
            ConfigurationKey(
                "path", \.path, .string(pattern: "^/", minLength: 1),
                "The stick's tty (an absolute path, such as /dev/healthgate/ant-<serial>); absent: every stick udev tags"),
            ConfigurationKey(
                "networkKeyFile", \.networkKeyFile, .nonEmptyText,
                "The file holding the ANT+ network key (8 bytes as hex); absent: ant-network-key in the configuration directory"),
            ConfigurationKey(
                "lostAfterSeconds", \.lostAfterSeconds, .number(lostAfterRange, unit: "seconds"), "A strap silent this long is lost"),
            ConfigurationKey(
                "heartbeatSeriesSeconds", \.heartbeatSeriesSeconds, .number(seriesSecondsRange, unit: "seconds"),
                "A heartbeat series is published at least this often"),
            ConfigurationKey(
                "heartbeatSeriesMaxBeats", \.heartbeatSeriesMaxBeats, .whole(seriesBeatsRange, unit: "beats"),
                "…or once it holds this many beats"),
            ConfigurationKey("simulation", \.simulation, "The simulated stick (transport: simulated)"),
        ]
    }

    /// Where ANT+ adopters get the key, for the error of a missing or malformed file.
    public static let keyAdvice =
        "the ANT+ network key is licensed to ANT+ adopters and is not shipped with healthgate: "
        + "register as an ANT+ Adopter at https://www.thisisant.com (Developer > ANT+ Adopter), "
        + "then write the key's 8 bytes as hex (\"B9 A5 …\") into this file, readable by the service user only"

    /// `ant-network-key` in the configuration directory: `$CONFIGURATION_DIRECTORY` (systemd),
    /// else `$XDG_CONFIG_HOME/healthgate`, else `~/.config/healthgate`, else `/etc/healthgate`:
    /// the directories the configuration file is looked for in.
    public static func defaultNetworkKeyFile(variables: [String: String]) -> String {
        let directory: String
        if let configured = variables["CONFIGURATION_DIRECTORY"], !configured.isEmpty {
            directory = String(configured.split(separator: ":")[0])
        } else if let xdg = variables["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            directory = xdg + "/healthgate"
        } else if let home = variables["HOME"], !home.isEmpty {
            directory = home + "/.config/healthgate"
        } else {
            directory = "/etc/healthgate"
        }
        return directory + "/" + defaultNetworkKeyFileName
    }

    /// Checks every key and reads the network key (a stick needs it; a simulated stick makes
    /// a random one of its own). No other I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key; a missing or malformed key file is
    ///   one at `networkKeyFile` that says where ANT+ adopters get the key, never its content.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> ANTHeartRateSettings {
        try PluginConfigurationError.check("lostAfterSeconds", lostAfterSeconds, in: Self.lostAfterRange, unit: "seconds")
        try PluginConfigurationError.check("heartbeatSeriesSeconds", heartbeatSeriesSeconds, in: Self.seriesSecondsRange, unit: "seconds")
        try PluginConfigurationError.check("heartbeatSeriesMaxBeats", heartbeatSeriesMaxBeats, in: Self.seriesBeatsRange)
        try PluginConfigurationError.check("simulation.straps", simulation.straps, in: ANTSimulationConfiguration.strapsRange)
        let key: ANTNetworkKey
        switch transport {
        case .simulated:
            guard path == nil else {
                throw PluginConfigurationError(keyPath: "path", reason: "a simulated stick has no path; remove it or use transport \"stick\"")
            }
            // The simulator and the source share a random key of their own: never the ANT+ one.
            key = ANTNetworkKey.random()
        case .stick:
            key = try Self.readKey(networkKeyFile ?? Self.defaultNetworkKeyFile(variables: environment.variables))
        }
        return ANTHeartRateSettings(
            transport: transport, endpoint: path.map { .path($0) } ?? .udev, networkKey: key,
            lostAfter: lostAfterSeconds, seriesSeconds: heartbeatSeriesSeconds, seriesMaxBeats: heartbeatSeriesMaxBeats,
            straps: simulation.straps)
    }

    /// Reads the key file. Its content never appears in an error.
    static func readKey(_ path: String) throws(PluginConfigurationError) -> ANTNetworkKey {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let why = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
            throw PluginConfigurationError(keyPath: "networkKeyFile", reason: "the ANT+ network key file \(path) \(why); \(keyAdvice)")
        }
        guard data.count <= 256, let key = ANTNetworkKey(hex: String(decoding: data, as: UTF8.self)) else {
            throw PluginConfigurationError(
                keyPath: "networkKeyFile", reason: "the ANT+ network key file \(path) does not hold 8 bytes as hex; \(keyAdvice)")
        }
        return key
    }
}

/// The simulated stick (`simulation`, with `transport: "simulated"`).
public struct ANTSimulationConfiguration: Sendable, Hashable, DeclaredConfiguration {
    /// Straps the simulated stick plays.
    public var straps = 4

    /// The allowed `straps`.
    public static let strapsRange = 1...60

    /// Every key at its default.
    public init() {}

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [ConfigurationKey("straps", \.straps, .whole(strapsRange, unit: "straps"), "Straps the simulated stick plays")]
    }
}

/// An `ant-heart-rate` source's settings: its configuration checked, with every default applied
/// and the network key read. ``ANTHeartRateConfiguration/validated(in:)`` makes them.
public struct ANTHeartRateSettings: Sendable, Hashable {
    /// A stick or a simulated one.
    public var transport: ANTTransportChoice
    /// The stick's path, or every stick udev tags.
    public var endpoint: SerialEndpoint
    /// The network key the stick's channel uses (never logged).
    public var networkKey: ANTNetworkKey
    /// Seconds of silence after which a strap is lost.
    public var lostAfter: Double
    /// A heartbeat series is published at least this often…
    public var seriesSeconds: Double
    /// …or once it holds this many beats.
    public var seriesMaxBeats: Int
    /// The simulated stick's straps.
    public var straps: Int
}

extension ANTHeartRateSource {
    /// The `config` object the catalog decodes for this source.
    public typealias Configuration = ANTHeartRateConfiguration
}
