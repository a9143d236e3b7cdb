public import Foundation

/// One compiled-in plugin: its kind, its summary, and how to build it from a `config` object.
public struct PluginCatalogEntry: Sendable {
    public let kind: String
    public let summary: String
    public let role: PluginRole
    let makeSource: (@Sendable (JSONValue, PluginEnvironment) throws -> any SampleSource)?
    let makeSink: (@Sendable (JSONValue, PluginEnvironment) throws -> any SampleSink)?

    /// A catalog entry for a source plugin.
    public static func source<P: SampleSource & ConfigurablePlugin>(_ plugin: P.Type) -> PluginCatalogEntry {
        PluginCatalogEntry(
            kind: P.kind, summary: P.summary, role: .source,
            makeSource: { config, environment in
                try P(configuration: try config.decode(P.Configuration.self), environment: environment)
            }, makeSink: nil)
    }

    /// A catalog entry for a sink plugin.
    public static func sink<P: SampleSink & ConfigurablePlugin>(_ plugin: P.Type) -> PluginCatalogEntry {
        PluginCatalogEntry(
            kind: P.kind, summary: P.summary, role: .sink, makeSource: nil,
            makeSink: { config, environment in
                try P(configuration: try config.decode(P.Configuration.self), environment: environment)
            })
    }
}

/// The explicit list of compiled-in plugins. The executable builds it; nothing registers itself.
public struct PluginCatalog: Sendable {
    public let entries: [PluginCatalogEntry]

    public init(_ entries: [PluginCatalogEntry]) {
        self.entries = entries
    }

    public func entry(kind: String) -> PluginCatalogEntry? {
        entries.first { $0.kind == kind }
    }

    /// Builds every plugin a configuration names. Any failure is a ``ConfigurationError`` with
    /// the file, the key path (`sources[1].config.address`) and the reason.
    public func instantiate(
        _ configuration: GatewayConfiguration, environment: (String) -> PluginEnvironment
    ) throws(ConfigurationError) -> (sources: [ConfiguredSource], sinks: [ConfiguredSink]) {
        var sources: [ConfiguredSource] = []
        var sinks: [ConfiguredSink] = []
        var names = Set<String>()
        for (role, list) in [(PluginRole.source, configuration.sources), (.sink, configuration.sinks)] {
            let section = role == .source ? "sources" : "sinks"
            for (index, plugin) in list.enumerated() {
                let where_ = "\(section)[\(index)]"
                guard let entry = entry(kind: plugin.kind) else {
                    throw ConfigurationError(
                        file: configuration.origin, keyPath: "\(where_).kind",
                        reason: "unknown plugin kind \"\(plugin.kind)\"; known: "
                            + entries.map(\.kind).joined(separator: ", "))
                }
                guard entry.role == role else {
                    throw ConfigurationError(
                        file: configuration.origin, keyPath: "\(where_).kind",
                        reason: "\"\(plugin.kind)\" is a \(entry.role.rawValue), not a \(role.rawValue)")
                }
                let name = plugin.name ?? (list.filter { $0.kind == plugin.kind }.count > 1
                    ? "\(plugin.kind)-\(index)" : plugin.kind)
                guard names.insert(name).inserted else {
                    throw ConfigurationError(
                        file: configuration.origin, keyPath: "\(where_).name",
                        reason: "the name \"\(name)\" is used twice")
                }
                let env = environment(name)
                do {
                    if let makeSource = entry.makeSource {
                        sources.append(ConfiguredSource(name: name, kind: plugin.kind, source: try makeSource(plugin.config, env)))
                    } else if let makeSink = entry.makeSink {
                        sinks.append(ConfiguredSink(
                            name: name, kind: plugin.kind, queue: plugin.queue ?? QueueConfiguration(),
                            sink: try makeSink(plugin.config, env)))
                    }
                } catch let error as DecodingError {
                    var reason = error.reason
                    if case .dataCorrupted = error, error.codingPathIsEmpty {
                        // The config was re-encoded from parsed JSON, so it is valid JSON; Foundation
                        // says "not valid JSON" (with no path) when a number does not fit an integer.
                        reason = "a number does not fit its field (a fraction or an out-of-range "
                            + "number where a whole number is expected)"
                    }
                    throw ConfigurationError(
                        file: configuration.origin,
                        keyPath: Self.join("\(where_).config", error.codingPathIsEmpty ? "" : error.keyPath),
                        reason: reason)
                } catch let error as PluginConfigurationError {
                    throw ConfigurationError(
                        file: configuration.origin, keyPath: Self.join("\(where_).config", error.keyPath),
                        reason: error.reason)
                } catch {
                    throw ConfigurationError(
                        file: configuration.origin, keyPath: "\(where_)", reason: "\(error)")
                }
            }
        }
        return (sources, sinks)
    }

    /// `sources[0].config` + `interval` → `sources[0].config.interval`; an empty inner path (the
    /// whole `config` is wrong) gives `sources[0].config`, and an index gives `config[2]`.
    /// Plain concatenation produced `sources[0].config.(top level)` and a trailing dot.
    static func join(_ outer: String, _ inner: String) -> String {
        if inner.isEmpty { return outer }
        return inner.hasPrefix("[") ? outer + inner : "\(outer).\(inner)"
    }
}

/// A source built from the configuration, with its instance name.
public struct ConfiguredSource: Sendable {
    public var name: String
    public var kind: String
    public var source: any SampleSource
    public init(name: String, kind: String, source: any SampleSource) {
        self.name = name
        self.kind = kind
        self.source = source
    }
}

/// A sink built from the configuration, with its instance name and queue settings.
public struct ConfiguredSink: Sendable {
    public var name: String
    public var kind: String
    public var queue: QueueConfiguration
    public var sink: any SampleSink
    public init(name: String, kind: String, queue: QueueConfiguration, sink: any SampleSink) {
        self.name = name
        self.kind = kind
        self.queue = queue
        self.sink = sink
    }
}
