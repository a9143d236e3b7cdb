public import GatewayRuntime
public import FoundationEssentials
import GatewayTime
import LinuxSystem

/// A configuration problem, reported at start-up with the file, the key path and the reason.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The file, or "(embedded default)".
    public var file: String
    /// Where in the file, e.g. `sinks[0].config.batchSize`.
    public var keyPath: String
    /// What is wrong; credentials in URLs are redacted.
    public var reason: String
    /// Whether the file itself is missing (sysexits' EX_NOINPUT), rather than wrong (EX_CONFIG).
    public var isMissingFile: Bool
    /// The file's other errors found at the same time (every unknown key and number out of
    /// range is reported at once), after this one.
    public var further: [ConfigurationError] = []

    /// An error at `keyPath` (empty: the whole file, shown as ``ConfigurationKeyPath/topLevel``);
    /// credentials in any URL inside `reason` are redacted.
    public init(file: String, keyPath: String, reason: String, isMissingFile: Bool = false) {
        self.file = file
        self.keyPath = ConfigurationKeyPath.rendered(keyPath)
        self.reason = CredentialRedaction.redact(reason)
        self.isMissingFile = isMissingFile
    }

    /// `FILE: KEY.PATH: reason`, then each further error on a line of its own, the same way.
    public var description: String {
        ([self] + further).map { "\($0.file): \(ConfigurationKeyPath.rendered($0.keyPath)): \($0.reason)" }.joined(separator: "\n")
    }
}

/// One plugin instance in the configuration file: an entry of `sources` or `sinks`. Its keys are
/// declared once, in ``configurationKeys``; the shapes of `kind` and `config` are the catalog's
/// (``GatewayConfiguration/schema(catalog:sections:)``).
public struct PluginConfiguration: Sendable, Hashable, DeclaredConfiguration {
    /// The catalog kind, e.g. `sqlite` (a file must give it: the empty default is only `init()`'s
    /// placeholder).
    public var kind = ""
    /// The instance name, unique in the file; defaults to the kind.
    public var name: String?
    /// For sinks: the bounded queue between the bus and the sink.
    public var queue: QueueConfiguration?
    /// The plugin's own settings, decoded by the plugin's `Configuration` type.
    public var config = JSONValue.object([:])

    /// Every key at its default.
    public init() {}

    public init(kind: String, name: String? = nil, queue: QueueConfiguration? = nil, config: JSONValue = .object([:])) {
        self.kind = kind
        self.name = name
        self.queue = queue
        self.config = config
    }

    /// Every key of a plugin entry.
    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("kind", \.kind, .nonEmptyText, "The plugin's kind in the catalog"),
            ConfigurationKey("name", \.name, .nonEmptyText, "The instance name in logs and status, unique in the file; absent: the kind"),
            ConfigurationKey("queue", \.queue, QueueConfiguration.configurationSchema, "The sink's bounded queue"),
            ConfigurationKey("config", \.config, .delegated, "The plugin's settings"),
        ]
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
///   "storeWaitSeconds": 5,
///   "controlSocket": "/run/healthgate/control.sock",
///   "profile": {…},
///   "participants": [{"name": "Ana", "devices": ["02:00:00:00:00:01"], "profile": {…}}],
///   "web": {"listen": "127.0.0.1:8080"},
///   "store": {"path": "/var/lib/healthgate/samples.sqlite"},
///   "bluetooth": {"adapterLimits": {"connections": 7}},
///   "clock": {"trusted": false}
/// }
/// ```
/// With no `sinks`, the executable adds the embedded default: the `sqlite` sink, which commits
/// into the store.
public struct GatewayConfiguration: Sendable, Hashable, DeclaredConfiguration {
    public var sources: [PluginConfiguration] = []
    public var sinks: [PluginConfiguration] = []
    public var logLevel = LogLevel.info
    /// How long a graceful stop may take before shutdown is forced.
    public var shutdownTimeoutSeconds: Double = 10
    /// How long a command that answers "stored" (`workout end`) waits for the store to hold what
    /// it names before answering that it is not stored yet.
    public var storeWaitSeconds: Double = 5
    /// Overrides the control socket path.
    public var controlSocket: String?
    /// The user profile for workouts (maximum heart rate, weight, …), decoded by the Workouts module.
    public var profile: JSONValue?
    /// The participants of group workouts (name, devices, profile), decoded by the Workouts module.
    public var participants: JSONValue?
    /// The live web board (`listen`, `tokenFile`), decoded by the WebBoard module; absent: off.
    public var web: JSONValue?
    /// Prometheus metrics on a listener of their own (`listen`, `tokenFile`, as `web`), decoded by
    /// the WebBoard module; absent: only on the board's listener, when it is on.
    public var metrics: JSONValue?
    /// The gateway's name in every record's provenance; absent: the host name.
    public var gatewayName: String?
    /// The time zone records are marked with (a tz database name); absent: `$TZ` or the system's.
    public var timeZone: String?
    /// The store (`path`, `maxDatabaseMegabytes`, `tombstoneRetentionDays`), decoded by the
    /// executable; absent: the defaults.
    public var store: JSONValue?
    /// What holds for every Bluetooth adapter, whichever sources use it (`adapterLimits`),
    /// decoded by the Bluetooth family (BLEProfileKit's `BluetoothConfiguration.decode`); absent: the
    /// defaults.
    public var bluetooth: JSONValue?
    /// The wall clock: `trusted` declares it right without the kernel's word (a box with a
    /// battery-backed real-time clock and no time synchronisation).
    public var clock = ClockConfiguration()
    /// Where the configuration came from, for error messages. Not part of the file.
    public var origin: String = "(embedded default)"

    /// Every key at its default: no plugins, the embedded default's origin.
    public init() {}

    public init(
        sources: [PluginConfiguration] = [], sinks: [PluginConfiguration] = [],
        logLevel: LogLevel = .info, shutdownTimeoutSeconds: Double = 10,
        controlSocket: String? = nil, profile: JSONValue? = nil, participants: JSONValue? = nil, web: JSONValue? = nil,
        gatewayName: String? = nil, timeZone: String? = nil, store: JSONValue? = nil,
        bluetooth: JSONValue? = nil, clock: ClockConfiguration = ClockConfiguration()
    ) {
        self.clock = clock
        self.store = store
        self.bluetooth = bluetooth
        self.gatewayName = gatewayName
        self.timeZone = timeZone
        self.participants = participants
        self.web = web
        self.sources = sources
        self.sinks = sinks
        self.logLevel = logLevel
        self.shutdownTimeoutSeconds = shutdownTimeoutSeconds
        self.controlSocket = controlSocket
        self.profile = profile
    }

    /// The longest `gatewayName`.
    public static let maximumGatewayNameLength = 64

    /// The longest control socket path: `sun_path` holds 108 bytes on Linux, NUL included
    /// (unix(7)).
    public static let maximumSocketPathBytes = 107
    /// The allowed `shutdownTimeoutSeconds`.
    public static let shutdownTimeoutRange: ClosedRange<Double> = 0.1...3600
    /// The allowed `storeWaitSeconds`.
    public static let storeWaitRange: ClosedRange<Double> = 0.1...3600

    /// Every key of the file. A key whose shape is ``ConfigurationSchema/delegated`` holds what
    /// another module decodes (the plugins' entries, by the catalog; a section, by its owner),
    /// and ``schema(catalog:sections:)`` gives it that module's shape.
    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey("sources", \.sources, .delegated, "Plugin instances that produce samples"),
            ConfigurationKey(
                "sinks", \.sinks, .delegated, "Plugin instances that receive samples; absent or empty: the embedded sqlite sink"),
            ConfigurationKey("logLevel", \.logLevel, .string(values: LogLevel.allCases.map(\.rawValue)), "The lowest level logged"),
            ConfigurationKey(
                "shutdownTimeoutSeconds", \.shutdownTimeoutSeconds, .number(shutdownTimeoutRange, unit: "seconds"),
                "How long a graceful stop may take before it is forced"),
            ConfigurationKey(
                "storeWaitSeconds", \.storeWaitSeconds, .number(storeWaitRange, unit: "seconds"),
                "How long `workout end` waits for the store to hold the workout before it answers that it is not stored yet (exit 75)"),
            ConfigurationKey(
                "controlSocket", \.controlSocket, .string(minLength: 1, maxLength: maximumSocketPathBytes),
                "The control socket's path (at most 107 bytes); absent: in the runtime directory"),
            ConfigurationKey("profile", \.profile, .delegated, "The user profile for workouts"),
            ConfigurationKey("participants", \.participants, .delegated, "The participants of group workouts"),
            ConfigurationKey("web", \.web, .delegated, "The live board, and GET /metrics on its listener; absent: off"),
            ConfigurationKey(
                "metrics", \.metrics, .delegated,
                "GET /metrics (Prometheus' text format) on a listener of its own; absent: only on the board's listener"),
            ConfigurationKey(
                "gatewayName", \.gatewayName, .string(pattern: "^[A-Za-z0-9._-]{1,\(maximumGatewayNameLength)}$"),
                "This gateway's name in every record's provenance; absent: the host name"),
            ConfigurationKey("timeZone", \.timeZone, .nonEmptyText, "A tz database name such as Europe/Berlin; absent: $TZ or the system's"),
            ConfigurationKey("store", \.store, .delegated, "The store's file and how it is kept"),
            ConfigurationKey("bluetooth", \.bluetooth, .delegated, "What holds for every Bluetooth adapter"),
            ConfigurationKey("clock", \.clock, "The wall clock"),
        ]
    }

    /// Checks the gateway's own settings (not the plugins', the profile's nor the Bluetooth
    /// adapters', which their owners check): ranges, the control socket path, queues only on sinks. No I/O.
    /// - Throws: ``ConfigurationError`` naming ``origin``, the key path and the reason.
    public func validate() throws(ConfigurationError) {
        func fail(_ keyPath: String, _ reason: String) -> ConfigurationError {
            ConfigurationError(file: origin, keyPath: keyPath, reason: reason)
        }
        do {
            try PluginConfigurationError.check(
                "shutdownTimeoutSeconds", shutdownTimeoutSeconds, in: Self.shutdownTimeoutRange, unit: "seconds")
            try PluginConfigurationError.check("storeWaitSeconds", storeWaitSeconds, in: Self.storeWaitRange, unit: "seconds")
        } catch {
            throw fail(error.keyPath, error.reason)
        }
        if let controlSocket {
            guard !controlSocket.isEmpty else { throw fail("controlSocket", "must not be empty") }
            guard controlSocket.utf8.count <= Self.maximumSocketPathBytes else {
                throw fail(
                    "controlSocket",
                    "the path is \(controlSocket.utf8.count) bytes; a Unix socket path holds at most "
                        + "\(Self.maximumSocketPathBytes) (sun_path, unix(7))")
            }
        }
        if let gatewayName {
            // The name goes into topics and file names elsewhere: keep it to a safe alphabet.
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
            guard (1...Self.maximumGatewayNameLength).contains(gatewayName.count),
                gatewayName.allSatisfy(allowed.contains)
            else {
                throw fail(
                    "gatewayName",
                    "must be 1 to \(Self.maximumGatewayNameLength) letters, digits, '.', '_' or '-', got \"\(gatewayName)\"")
            }
        }
        if let timeZone, NamedTimeZone.named(timeZone) == nil {
            throw fail("timeZone", "not a time zone of the tz database (like Europe/Berlin or UTC): \"\(timeZone)\"")
        }
        for (index, source) in sources.enumerated() where source.queue != nil {
            throw fail("sources[\(index)].queue", "only sinks have a queue")
        }
        for (index, sink) in sinks.enumerated() {
            guard let queue = sink.queue else { continue }
            do {
                try PluginConfigurationError.check(
                    "capacity", queue.capacity, in: QueueConfiguration.capacityRange, unit: "records")
            } catch {
                throw fail(ConfigurationKeyPath.joining("sinks[\(index)].queue", error.keyPath), error.reason)
            }
        }
    }

    /// Parses a configuration file's bytes strictly (see ``ConfigurationDecoder``), refuses
    /// every key and every number outside what `schema` declares (the whole file's schema:
    /// ``schema(catalog:sections:)``; all of them at once, see
    /// ``ConfigurationSchema/problems(in:)``), and checks the gateway's own settings with
    /// ``validate()``.
    /// - Throws: ``ConfigurationError`` naming `origin`, the key path and the reason.
    public static func parse(_ data: Data, origin: String, schema: ConfigurationSchema? = nil) throws(ConfigurationError)
        -> GatewayConfiguration
    {
        try parse(data, origin: origin) { value in
            schema.map { fileProblems(in: value, schema: $0, origin: origin) } ?? []
        }
    }

    /// Parses a configuration file's bytes as ``parse(_:origin:schema:)`` does with
    /// `fileSchema`'s whole schema, building only the parts of it the file uses (see
    /// ``schema(catalog:sections:usedBy:)``) unless the file has a problem: then the whole
    /// schema words every problem, so the errors are the same.
    /// - Throws: ``ConfigurationError`` naming `origin`, the key path and the reason.
    public static func parse(_ data: Data, origin: String, fileSchema: ConfigurationFileSchema) throws(ConfigurationError)
        -> GatewayConfiguration
    {
        try parse(data, origin: origin) { value in
            guard !fileSchema.parts(usedBy: value).problems(in: value).isEmpty else { return [] }
            return fileProblems(in: value, schema: fileSchema.whole, origin: origin)
        }
    }

    private static func parse(
        _ data: Data, origin: String, problems: (JSONValue) -> [ConfigurationError]
    ) throws(ConfigurationError) -> GatewayConfiguration {
        let value: JSONValue
        do {
            value = try ConfigurationJSONParser.parse(data)
        } catch {
            throw ConfigurationError(file: origin, keyPath: ConfigurationKeyPath.topLevel, reason: "not valid JSON: \(error)")
        }
        // Said before anything else: the schema's and the decoder's words ("expected an object")
        // do not tell what the file is.
        guard case .object = value else {
            throw ConfigurationError(file: origin, keyPath: ConfigurationKeyPath.topLevel, reason: Self.notAnObject(value))
        }
        // Every unknown key and number out of range at once, before decoding stops at the first.
        let problems = problems(value)
        if var first = problems.first {
            first.further = Array(problems.dropFirst())
            throw first
        }
        var configuration: GatewayConfiguration
        do {
            configuration = try value.decodeStrictly(GatewayConfiguration.self)
        } catch let error as DecodingError {
            throw ConfigurationError(file: origin, keyPath: error.keyPath, reason: error.reason)
        } catch {
            throw ConfigurationError(file: origin, keyPath: ConfigurationKeyPath.topLevel, reason: "\(error)")
        }
        configuration.origin = origin
        try configuration.validate()
        return configuration
    }

    /// What a file that is not a JSON object is told: what the file must be, then what it is.
    static func notAnObject(_ value: JSONValue) -> String {
        #"the file must be a JSON object, such as {"sources": [...], "sinks": [...]} (every key is optional), "#
            + "got \(value.inWords)"
    }

    /// Every problem `schema` finds in `value`, as errors of the file `origin`.
    private static func fileProblems(in value: JSONValue, schema: ConfigurationSchema, origin: String) -> [ConfigurationError] {
        schema.problems(in: value).map { problem in
            ConfigurationError(
                file: origin, keyPath: problem.keyPath,
                reason: misplacedPlugin(at: problem.keyPath, in: value, schema: schema) ?? problem.reason)
        }
    }

    /// Why the plugin at `keyPath` (`sources[1].kind`) is in the wrong list, when its kind is
    /// unknown there but one of the other list's (a sink under `sources`); nil otherwise.
    static func misplacedPlugin(at keyPath: String, in value: JSONValue, schema: ConfigurationSchema) -> String? {
        let lists: [(key: String, role: String)] = [("sources", "source"), ("sinks", "sink")]
        guard keyPath.hasSuffix("].kind"),
            let list = lists.first(where: { keyPath.hasPrefix($0.key + "[") }),
            let other = lists.first(where: { $0.key != list.key }),
            let index = Int(keyPath.dropFirst(list.key.count + 1).prefix { $0 != "]" }),
            case .array(let entries)? = value[list.key], entries.indices.contains(index),
            case .string(let kind)? = entries[index]["kind"],
            case .object(let document) = schema,
            case .array(.oneOf(let alternatives), _, _)? = document.property(other.key)?.schema
        else { return nil }
        let otherKinds = alternatives.compactMap { alternative -> String? in
            guard case .object(let object) = alternative, case .constant(let constant)? = object.property("kind")?.schema else { return nil }
            return constant
        }
        guard otherKinds.contains(kind) else { return nil }
        return "\"\(kind)\" is a \(other.role), not a \(list.role): move it to \"\(other.key)\""
    }

    /// Reads and parses a configuration file.
    /// - Throws: ``ConfigurationError``; ``ConfigurationError/isMissingFile`` when there is no
    ///   such file.
    public static func load(from url: URL, schema: ConfigurationSchema? = nil) throws(ConfigurationError) -> GatewayConfiguration {
        try load(path: url.path, schema: schema)
    }

    /// Reads and parses the configuration file at `path` (absolute: it is the configuration's
    /// ``origin``), with system calls rather than Foundation's FileManager and URL, whose code
    /// would otherwise stay resident in every gateway for this one read (Benchmarks/README.md,
    /// "memory").
    /// - Throws: ``ConfigurationError``; ``ConfigurationError/isMissingFile`` when there is no
    ///   such file.
    public static func load(path: String, schema: ConfigurationSchema? = nil) throws(ConfigurationError) -> GatewayConfiguration {
        try parse(try contents(path: path), origin: path, schema: schema)
    }

    /// Reads the configuration file at `path` and parses it with ``parse(_:origin:fileSchema:)``:
    /// what `run` and `config check` do.
    /// - Throws: ``ConfigurationError``; ``ConfigurationError/isMissingFile`` when there is no
    ///   such file.
    public static func load(path: String, fileSchema: ConfigurationFileSchema) throws(ConfigurationError) -> GatewayConfiguration {
        try parse(try contents(path: path), origin: path, fileSchema: fileSchema)
    }

    /// The bytes of the configuration file at `path`.
    private static func contents(path: String) throws(ConfigurationError) -> Data {
        guard FileSystem.exists(path) else {
            throw ConfigurationError(file: path, keyPath: "(file)", reason: "no such file", isMissingFile: true)
        }
        guard !FileSystem.isDirectory(path) else {
            throw ConfigurationError(
                file: path, keyPath: "(file)", reason: "is a directory; give the configuration file itself")
        }
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.contents(of: path)
        } catch {
            let reason = error == .permissionDenied
                ? "cannot read: permission denied"
                : "cannot read: \(FileSystemError(path: path, errno: error))"
            throw ConfigurationError(file: path, keyPath: "(file)", reason: reason)
        }
        return Data(bytes)
    }
}

extension GatewayConfiguration {
    /// Decodes a top-level section another module owns (`store`, `web`, `metrics`, `bluetooth`)
    /// strictly (see ``ConfigurationDecoder``), as the gateway's own keys are decoded.
    /// - Throws: ``ConfigurationError`` naming `origin` and `KEY.PATH` (`key` itself for an
    ///   error at the section's top level).
    public static func decodeSection<Section: Decodable>(
        _ value: JSONValue, as type: Section.Type, key: String, origin: String
    ) throws(ConfigurationError) -> Section {
        do {
            return try value.decodeStrictly(Section.self)
        } catch let error as DecodingError {
            let path = ConfigurationKeyPath.joining(key, error.keyPath)
            throw ConfigurationError(file: origin, keyPath: path, reason: error.reason)
        } catch {
            throw ConfigurationError(file: origin, keyPath: key, reason: "\(error)")
        }
    }

    /// The schemas of the top-level objects other modules decode (`store`, `web`, `profile`,
    /// `participants`, `bluetooth`), each built when it is read: the initializer's arguments are
    /// evaluated only then, so the schema of a section a file does not have is never built (see
    /// ``schema(catalog:sections:usedBy:)``).
    public struct OwnedSections: Sendable {
        /// The `store` section's schema.
        public var store: ConfigurationSchema { makeStore() }
        /// The `web` (and `metrics`) section's schema.
        public var web: ConfigurationSchema { makeWeb() }
        /// The `profile` section's schema.
        public var profile: ConfigurationSchema { makeProfile() }
        /// The `participants` section's schema.
        public var participants: ConfigurationSchema { makeParticipants() }
        /// The Bluetooth family's section (BLEProfileKit's `BluetoothConfiguration.configurationSchema`).
        public var bluetooth: ConfigurationSchema { makeBluetooth() }

        private let makeStore, makeWeb, makeProfile, makeParticipants, makeBluetooth: @Sendable () -> ConfigurationSchema

        /// The sections' schemas, each argument evaluated when its section is read, not here.
        public init(
            store: @autoclosure @escaping @Sendable () -> ConfigurationSchema,
            web: @autoclosure @escaping @Sendable () -> ConfigurationSchema,
            profile: @autoclosure @escaping @Sendable () -> ConfigurationSchema,
            participants: @autoclosure @escaping @Sendable () -> ConfigurationSchema,
            bluetooth: @autoclosure @escaping @Sendable () -> ConfigurationSchema
        ) {
            self.makeStore = store
            self.makeWeb = web
            self.makeProfile = profile
            self.makeParticipants = participants
            self.makeBluetooth = bluetooth
        }
    }

    /// The whole configuration file's schema: the declared keys (``configurationKeys``), each
    /// delegated one with its owner's shape: every plugin of `catalog` as one alternative of
    /// `sources[]` or `sinks[]`, chosen by its `kind`, and the sections of `sections`. What
    /// `config schema` and `config reference` print.
    public static func schema(catalog: PluginCatalog, sections: OwnedSections) -> ConfigurationSchema {
        schema(catalog: catalog, sections: sections, uses: nil)
    }

    /// The parts of the whole file's schema (``schema(catalog:sections:)``) that `file` uses:
    /// the `config` of each plugin kind it names (under `sources` or `sinks`) and each section
    /// it has. Every other part stays as declared by its owner's absence: a section `file` does
    /// not have is ``ConfigurationSchema/delegated``, and a kind it does not name keeps its
    /// alternative, `kind` included, with its `config` delegated.
    ///
    /// Why this is enough to check `file`: ``ConfigurationSchema/problems(in:)`` walks only the
    /// keys `file` has and picks a plugin's alternative by its `kind`, so over `file` it visits
    /// exactly the nodes of the whole schema, and finds a problem exactly where the whole schema
    /// finds one. Only the wording of a problem can differ (a misspelt key's suggestion weighs
    /// the keys `file` does not have), which is why ``parse(_:origin:fileSchema:)`` words the
    /// problems it finds with the whole schema. An idle gateway thus never runs the
    /// configuration code of the plugins it does not use, and its pages stay out of memory
    /// (Benchmarks/README.md, "memory").
    public static func schema(catalog: PluginCatalog, sections: OwnedSections, usedBy file: JSONValue) -> ConfigurationSchema {
        var kinds: Set<String> = []
        for list in ["sources", "sinks"] {
            guard case .array(let entries)? = file[list] else { continue }
            for entry in entries { if case .string(let kind)? = entry["kind"] { kinds.insert(kind) } }
        }
        var keys: Set<String> = []
        if case .object(let members) = file { keys = Set(members.keys) }
        return schema(catalog: catalog, sections: sections, uses: (kinds, keys))
    }

    /// The whole schema (`uses` nil), or the parts that a file naming these plugin kinds and
    /// having these top-level keys uses.
    private static func schema(
        catalog: PluginCatalog, sections: OwnedSections, uses: (kinds: Set<String>, keys: Set<String>)?
    ) -> ConfigurationSchema {
        func entries(_ role: PluginRole) -> ConfigurationSchema {
            .array(.oneOf(catalog.entries.filter { $0.role == role }.map { entry in
                var entryKeys = PluginConfiguration.configurationObject(defaults: PluginConfiguration())
                entryKeys.properties = entryKeys.properties.compactMap { key in
                    var key = key
                    switch key.name {
                    case "kind": (key.schema, key.description) = (.constant(entry.kind), entry.summary)
                    case "queue" where role != .sink || entry.isFollower: return nil  // a follower reads the store, not a queue
                    case "config" where uses.map({ $0.kinds.contains(entry.kind) }) ?? true:
                        (key.schema, key.description) = (entry.schema, "The \(entry.kind) plugin's settings")
                    default: break
                    }
                    return key
                }
                return .object(entryKeys)
            }))
        }
        let owned: [String: () -> ConfigurationSchema] = [
            "sources": { entries(.source) }, "sinks": { entries(.sink) }, "profile": { sections.profile },
            "participants": { sections.participants }, "web": { sections.web }, "metrics": { sections.web },
            "store": { sections.store }, "bluetooth": { sections.bluetooth },
        ]
        var keys = configurationObject(defaults: GatewayConfiguration())
        for index in keys.properties.indices {
            let name = keys.properties[index].name
            guard case .delegated = keys.properties[index].schema, let shape = owned[name],
                uses.map({ $0.keys.contains(name) }) ?? true
            else { continue }
            keys.properties[index].schema = shape()
        }
        return .object(keys)
    }
}

/// The configuration's `clock` section.
public struct ClockConfiguration: Sendable, Hashable, DeclaredConfiguration {
    /// Whether the wall clock is declared right (default false: the kernel says).
    public var trusted = false

    /// Every key at its default.
    public init() {}

    public init(trusted: Bool) { self.trusted = trusted }

    /// Every key of the `clock` section.
    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "trusted", \.trusted, .boolean,
                "Declare the wall clock right without the kernel's synchronisation state (a box with a battery-backed real-time clock and no NTP); false: ask the kernel"),
        ]
    }
}
