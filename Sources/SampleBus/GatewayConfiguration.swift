public import Foundation

/// A configuration problem, reported at start-up with the file, the key path and the reason.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The file, or "(embedded default)".
    public var file: String
    /// Where in the file, e.g. `sinks[0].config.batchSize`.
    public var keyPath: String
    public var reason: String

    public init(file: String, keyPath: String, reason: String) {
        self.file = file
        self.keyPath = keyPath
        self.reason = reason
    }

    public var description: String { "\(file): \(keyPath): \(reason)" }
}

/// One plugin instance in the configuration file.
public struct PluginConfiguration: Sendable, Codable, Hashable {
    /// The catalog kind, e.g. `sqlite`.
    public var kind: String
    /// The instance name, unique in the file; defaults to the kind.
    public var name: String?
    /// For sinks: the bounded queue between the bus and the sink.
    public var queue: QueueConfiguration?
    /// The plugin's own settings, decoded by the plugin's `Configuration` type.
    public var config: JSONValue

    public init(kind: String, name: String? = nil, queue: QueueConfiguration? = nil, config: JSONValue = .object([:])) {
        self.kind = kind
        self.name = name
        self.queue = queue
        self.config = config
    }

    enum CodingKeys: String, CodingKey { case kind, name, queue, config }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(String.self, forKey: .kind)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        queue = try container.decodeIfPresent(QueueConfiguration.self, forKey: .queue)
        config = try container.decodeIfPresent(JSONValue.self, forKey: .config) ?? .object([:])
    }
}

/// The gateway's configuration file (JSON). Every key is optional.
///
/// ```json
/// {
///   "sources": [{"kind": "ble-heart-rate", "name": "chest-strap", "config": {…}}],
///   "sinks":   [{"kind": "sqlite", "queue": {"capacity": 10000, "policy": "block"}, "config": {…}}],
///   "logLevel": "info",
///   "shutdownTimeoutSeconds": 10,
///   "controlSocket": "/run/healthgate/control.sock",
///   "profile": {…}
/// }
/// ```
/// With no `sinks`, the executable adds the embedded default: the SQLite store.
public struct GatewayConfiguration: Sendable, Codable, Hashable {
    public var sources: [PluginConfiguration]
    public var sinks: [PluginConfiguration]
    public var logLevel: LogLevel
    /// How long a graceful stop may take before shutdown is forced.
    public var shutdownTimeoutSeconds: Double
    /// Overrides the control socket path.
    public var controlSocket: String?
    /// The user profile for workouts (maximum heart rate, weight, …), decoded by the Workouts module.
    public var profile: JSONValue?
    /// Where the configuration came from, for error messages. Not part of the file.
    public var origin: String = "(embedded default)"

    public init(
        sources: [PluginConfiguration] = [], sinks: [PluginConfiguration] = [],
        logLevel: LogLevel = .info, shutdownTimeoutSeconds: Double = 10,
        controlSocket: String? = nil, profile: JSONValue? = nil
    ) {
        self.sources = sources
        self.sinks = sinks
        self.logLevel = logLevel
        self.shutdownTimeoutSeconds = shutdownTimeoutSeconds
        self.controlSocket = controlSocket
        self.profile = profile
    }

    enum CodingKeys: String, CodingKey {
        case sources, sinks, logLevel, shutdownTimeoutSeconds, controlSocket, profile
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sources = try container.decodeIfPresent([PluginConfiguration].self, forKey: .sources) ?? []
        sinks = try container.decodeIfPresent([PluginConfiguration].self, forKey: .sinks) ?? []
        logLevel = try container.decodeIfPresent(LogLevel.self, forKey: .logLevel) ?? .info
        shutdownTimeoutSeconds =
            try container.decodeIfPresent(Double.self, forKey: .shutdownTimeoutSeconds) ?? 10
        controlSocket = try container.decodeIfPresent(String.self, forKey: .controlSocket)
        profile = try container.decodeIfPresent(JSONValue.self, forKey: .profile)
        guard shutdownTimeoutSeconds > 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: .shutdownTimeoutSeconds, in: container, debugDescription: "must be positive")
        }
    }

    /// Parses a configuration file's bytes.
    /// - Throws: ``ConfigurationError`` naming `origin`, the key path and the reason.
    public static func parse(_ data: Data, origin: String) throws(ConfigurationError) -> GatewayConfiguration {
        do {
            var configuration = try JSONDecoder().decode(GatewayConfiguration.self, from: data)
            configuration.origin = origin
            return configuration
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                throw ConfigurationError(
                    file: origin, keyPath: "(top level)",
                    reason: "not valid JSON: \(error.reason)")
            }
            throw ConfigurationError(file: origin, keyPath: error.keyPath, reason: error.reason)
        } catch {
            throw ConfigurationError(file: origin, keyPath: "(top level)", reason: "\(error)")
        }
    }

    /// Reads and parses a configuration file.
    public static func load(from url: URL) throws(ConfigurationError) -> GatewayConfiguration {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ConfigurationError(
                file: url.path, keyPath: "(file)", reason: "cannot read: \(error.localizedDescription)")
        }
        return try parse(data, origin: url.path)
    }
}
