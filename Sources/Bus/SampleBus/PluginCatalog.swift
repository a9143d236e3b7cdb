public import GatewayRuntime
import FoundationEssentials

/// One compiled-in plugin: its kind, its summary, and how to validate and build it from a
/// `config` object.
public struct PluginCatalogEntry: Sendable {
    public let kind: String
    public let summary: String
    public let role: PluginRole
    /// The plugin's type, for what a module that knows more of it asks (the Bluetooth profile a
    /// source reads, for `scan`); nil for sinks.
    public let sourceType: (any SampleSource.Type)?
    /// The `config` object's declared keys (``PluginConfigurationContract``), built when asked
    /// for: an entry held for the process's life does not keep the tree alive.
    public var schema: ConfigurationSchema { makeSchema() }
    let makeSchema: @Sendable () -> ConfigurationSchema
    let validate: @Sendable (JSONValue, PluginEnvironment) throws -> Void
    let makeSource: (@Sendable (JSONValue, PluginEnvironment) throws -> any SampleSource)?
    let makeSink: (@Sendable (JSONValue, PluginEnvironment) throws -> any SampleSink)?
    let makeFollower: (@Sendable (JSONValue, PluginEnvironment) throws -> any StoreFollower)?

    /// The one path from a `config` object to a plugin's settings: the declared ranges, strict
    /// decoding, then ``PluginConfigurationContract/validated(in:)``. Both `check` and `run` go
    /// through it.
    static func settings<P: ConfigurablePlugin>(
        _ plugin: P.Type, _ config: JSONValue, _ environment: PluginEnvironment
    ) throws -> P.Configuration.Settings {
        try P.Configuration.configurationSchema.check(config)
        return try config.decodeStrictly(P.Configuration.self).validated(in: environment)
    }

    /// A catalog entry for a source plugin.
    public static func source<P: SampleSource & ConfigurablePlugin>(_ plugin: P.Type) -> PluginCatalogEntry {
        source(P.self) { settings, environment in try P(settings: settings, environment: environment) }
    }

    /// A catalog entry for a source plugin that `make` builds from its validated settings: how a
    /// device family hands its plugins the services the executable made for them (the Bluetooth
    /// adapters, BLEProfileKit's `bluetoothSource`), which the bus knows nothing of.
    public static func source<P: SampleSource & ConfigurablePlugin>(
        _ plugin: P.Type, make: @escaping @Sendable (P.Configuration.Settings, PluginEnvironment) throws -> P
    ) -> PluginCatalogEntry {
        PluginCatalogEntry(
            kind: P.kind, summary: P.summary, role: .source, sourceType: P.self, makeSchema: { P.Configuration.configurationSchema },
            validate: { config, environment in _ = try settings(P.self, config, environment) },
            makeSource: { config, environment in try make(try settings(P.self, config, environment), environment) },
            makeSink: nil, makeFollower: nil)
    }

    /// A catalog entry for a sink plugin.
    public static func sink<P: SampleSink & ConfigurablePlugin>(_ plugin: P.Type) -> PluginCatalogEntry {
        PluginCatalogEntry(
            kind: P.kind, summary: P.summary, role: .sink, sourceType: nil, makeSchema: { P.Configuration.configurationSchema },
            validate: { config, environment in _ = try settings(P.self, config, environment) },
            makeSource: nil,
            makeSink: { config, environment in
                try P(settings: try settings(P.self, config, environment), environment: environment)
            }, makeFollower: nil)
    }

    /// A catalog entry for a remote sink that follows the store (configured under `sinks`, with
    /// no queue: it takes nothing from the bus).
    public static func follower<P: StoreFollower & ConfigurablePlugin>(_ plugin: P.Type) -> PluginCatalogEntry {
        PluginCatalogEntry(
            kind: P.kind, summary: P.summary, role: .sink, sourceType: nil, makeSchema: { P.Configuration.configurationSchema },
            validate: { config, environment in _ = try settings(P.self, config, environment) },
            makeSource: nil, makeSink: nil,
            makeFollower: { config, environment in
                try P(settings: try settings(P.self, config, environment), environment: environment)
            })
    }

    /// Whether the entry is a remote sink that follows the store.
    public var isFollower: Bool { makeFollower != nil }
}

/// The explicit list of compiled-in plugins. The executable builds it; nothing registers itself.
public struct PluginCatalog: Sendable {
    public let entries: [PluginCatalogEntry]
    /// The forms a person's data can be exported in besides healthgate's JSON, each from the
    /// plugin that knows it (`participant export --format`).
    public let exportFormats: [any PersonExportFormat.Type]

    public init(_ entries: [PluginCatalogEntry], exportFormats: [any PersonExportFormat.Type] = []) {
        self.entries = entries
        self.exportFormats = exportFormats
    }

    public func entry(kind: String) -> PluginCatalogEntry? {
        entries.first { $0.kind == kind }
    }

    /// Decodes and validates every plugin a configuration names, without building any: what
    /// `healthgate config check` runs. No I/O beyond looking at referenced files.
    /// - Throws: ``ConfigurationError`` with the file, the key path and the reason; exactly the
    ///   errors ``instantiate(_:environment:)`` throws for the configuration, except those of
    ///   building the plugins (connecting, opening files). Every plugin is checked: the first
    ///   plugin's error is thrown with the others' in ``ConfigurationError/further``.
    /// - Returns: each plugin's instance name, kind, role and queue, in file order.
    @discardableResult
    public func validate(
        _ configuration: GatewayConfiguration, environment: (String) -> PluginEnvironment
    ) throws(ConfigurationError) -> [ValidatedPlugin] {
        var validated: [ValidatedPlugin] = []
        _ = try resolve(configuration, environment: environment, build: false) { validated.append($0) }
        return validated
    }

    /// Builds every plugin a configuration names, after the checks of
    /// ``validate(_:environment:)``. Any failure is a ``ConfigurationError`` with the file, the
    /// key path (`sources[1].config.address`) and the reason.
    public func instantiate(
        _ configuration: GatewayConfiguration, environment: (String) -> PluginEnvironment
    ) throws(ConfigurationError) -> BuiltPlugins {
        try resolve(configuration, environment: environment, build: true) { _ in }
    }

    private func resolve(
        _ configuration: GatewayConfiguration, environment: (String) -> PluginEnvironment, build: Bool,
        validated: (ValidatedPlugin) -> Void
    ) throws(ConfigurationError) -> BuiltPlugins {
        try configuration.validate()
        var sources: [ConfiguredSource] = []
        var sinks: [ConfiguredSink] = []
        var followers: [ConfiguredFollower] = []
        var names = Set<String>()
        // Validation reports every plugin's first error at once; building stops at the first.
        var failures: [ConfigurationError] = []
        for (role, list) in [(PluginRole.source, configuration.sources), (.sink, configuration.sinks)] {
            let section = role == .source ? "sources" : "sinks"
            for (index, plugin) in list.enumerated() {
                do throws(ConfigurationError) {
                    let where_ = "\(section)[\(index)]"
                    guard let entry = entry(kind: plugin.kind) else {
                        let known = entries.map(\.kind)
                        var reason = "unknown plugin kind \"\(plugin.kind)\""
                        if let suggestion = KeySuggestion.closest(to: plugin.kind, among: known) {
                            reason += "; did you mean \"\(suggestion)\"?"
                        }
                        throw ConfigurationError(
                            file: configuration.origin, keyPath: "\(where_).kind",
                            reason: reason + " (known: \(known.joined(separator: ", ")))")
                    }
                    guard entry.role == role else {
                        throw ConfigurationError(
                            file: configuration.origin, keyPath: "\(where_).kind",
                            reason: "\"\(plugin.kind)\" is a \(entry.role.rawValue), not a \(role.rawValue)")
                    }
                    let name = plugin.name ?? (list.filter { $0.kind == plugin.kind }.count > 1
                        ? "\(plugin.kind)-\(index)" : plugin.kind)
                    guard !name.isEmpty else {
                        throw ConfigurationError(file: configuration.origin, keyPath: "\(where_).name", reason: "must not be empty")
                    }
                    guard names.insert(name).inserted else {
                        throw ConfigurationError(
                            file: configuration.origin, keyPath: "\(where_).name",
                            reason: "the name \"\(name)\" is used twice")
                    }
                    if entry.isFollower, plugin.queue != nil {
                        throw ConfigurationError(
                            file: configuration.origin, keyPath: "\(where_).queue",
                            reason: "\"\(plugin.kind)\" follows the store's change log and has no queue; remove \"queue\"")
                    }
                    let env = environment(name)
                    do {
                        if !build {
                            try entry.validate(plugin.config, env)
                            validated(ValidatedPlugin(
                                name: name, kind: plugin.kind, role: role,
                                queue: role == .sink && !entry.isFollower ? plugin.queue ?? QueueConfiguration() : nil,
                                followsStore: entry.isFollower))
                        } else if let makeSource = entry.makeSource {
                            sources.append(ConfiguredSource(name: name, kind: plugin.kind, source: try makeSource(plugin.config, env)))
                        } else if let makeSink = entry.makeSink {
                            sinks.append(ConfiguredSink(
                                name: name, kind: plugin.kind, queue: plugin.queue ?? QueueConfiguration(),
                                sink: try makeSink(plugin.config, env)))
                        } else if let makeFollower = entry.makeFollower {
                            followers.append(ConfiguredFollower(name: name, kind: plugin.kind, follower: try makeFollower(plugin.config, env)))
                        }
                    } catch let error as DecodingError {
                        throw ConfigurationError(
                            file: configuration.origin,
                            keyPath: ConfigurationKeyPath.joining("\(where_).config", error.keyPath),
                            reason: error.reason)
                    } catch let error as PluginConfigurationError {
                        throw ConfigurationError(
                            file: configuration.origin, keyPath: ConfigurationKeyPath.joining("\(where_).config", error.keyPath),
                            reason: error.reason)
                    } catch {
                        throw ConfigurationError(
                            file: configuration.origin, keyPath: "\(where_)", reason: "\(error)")
                    }
                } catch {
                    guard !build else { throw error }
                    var first = error
                    first.further = []
                    failures += [first] + error.further
                }
            }
        }
        if var first = failures.first {
            first.further = Array(failures.dropFirst())
            throw first
        }
        return BuiltPlugins(sources: sources, sinks: sinks, followers: followers)
    }
}

/// A plugin entry that passed validation: what `healthgate config check` lists.
public struct ValidatedPlugin: Sendable, Hashable {
    /// The instance name.
    public var name: String
    /// The catalog kind.
    public var kind: String
    /// Source or sink.
    public var role: PluginRole
    /// A sink's queue settings; nil for a source and for a remote sink that follows the store.
    public var queue: QueueConfiguration?
    /// Whether it is a remote sink that follows the store's change log.
    public var followsStore: Bool = false
}

/// Everything a configuration builds.
public struct BuiltPlugins: Sendable {
    public var sources: [ConfiguredSource]
    public var sinks: [ConfiguredSink]
    public var followers: [ConfiguredFollower]

    public init(sources: [ConfiguredSource], sinks: [ConfiguredSink], followers: [ConfiguredFollower] = []) {
        self.sources = sources
        self.sinks = sinks
        self.followers = followers
    }
}

/// A remote sink that follows the store, built from the configuration, with its instance name.
public struct ConfiguredFollower: Sendable {
    public var name: String
    public var kind: String
    public var follower: any StoreFollower
    public init(name: String, kind: String, follower: any StoreFollower) {
        self.name = name
        self.kind = kind
        self.follower = follower
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
