public import GatewayRuntime
public import HealthStore
public import HealthModel

/// A source of health records: a device adapter or a simulator.
///
/// `run` is one long-running method: returning means the source is done, throwing means it
/// failed (the supervisor restarts it with backoff), and it must return promptly, by throwing
/// `CancellationError` or returning, when its task is cancelled: that is how the gateway stops
/// sources on shutdown.
public protocol SampleSource: Sendable {
    func run(context: SourceContext) async throws
}

/// A remote sink that follows the store's change log (an HTTP repository, an MQTT broker): it
/// takes nothing from the bus. It reads the changes after its cursor from the store, sends them,
/// and commits its cursor in the store once the receiver acknowledged them, so a crash costs it
/// nothing the store committed (see RemoteSinkKit).
///
/// `run` returns when a graceful stop is carried out: once ``FollowerContext/storeSettled``
/// says every sink drained into the store and the follower sent what it could without waiting
/// on a failing receiver. It is cancelled when the stop is forced. Throwing restarts it with
/// backoff, like any plugin.
public protocol StoreFollower: Sendable {
    func run(context: FollowerContext) async throws
}

/// A destination for health records: a store or a repository.
///
/// `run` takes batches from `inbox` until it returns nil (the bus finished and the queue is
/// drained), then flushes and returns. A batch counts as delivered once the sink asks for the
/// next one (or calls ``SinkInbox/acknowledge()``); if `run` throws first, the supervisor
/// restarts the sink and the same batch is delivered again, so nothing accepted is lost.
/// A sink is cancelled only when shutdown is forced.
public protocol SampleSink: Sendable {
    /// Whether the sink wants this record. Records it does not want never enter its queue.
    func accepts(_ record: HealthRecord) -> Bool
    func run(inbox: SinkInbox, context: SinkContext) async throws
    /// Non-nil for a sink that stores source checkpoints: it takes batches with
    /// ``SinkInbox/nextBatch(maxCount:)`` and commits each batch's checkpoints in the same
    /// transaction as its records; the reader reads what it committed. Default nil.
    var checkpointReader: (any SourceCheckpointReader)? { get }
    /// How long the sink holds records on purpose before it acknowledges them (the `sqlite`
    /// sink's batch window): the watchdog (``PipelineWatchdog``) waits that long beyond its
    /// threshold before it calls a queue stuck. Default zero.
    var batchWindow: Duration { get }
}

extension SampleSink {
    public func accepts(_ record: HealthRecord) -> Bool { true }
    public var checkpointReader: (any SourceCheckpointReader)? { nil }
    public var batchWindow: Duration { .zero }
}

/// A plugin's `config` object: its numbers checked against the ranges its
/// ``ConfigurationSchemaDeclaring/configurationSchema`` declares, decoded strictly by
/// ``ConfigurationDecoder`` (unknown keys and numbers that do not fit are errors), then checked by
/// ``validated(in:)``, which applies every
/// default and returns the typed settings the plugin is built from.
///
/// `healthgate config check` and `healthgate run` both go through ``PluginCatalog``, which
/// decodes and validates with this one code path; `check` stops there, `run` goes on to build
/// the plugin from the settings.
public protocol PluginConfigurationContract: Decodable, Sendable, ConfigurationSchemaDeclaring {
    /// What the plugin is built from: every default applied, every value checked.
    associatedtype Settings: Sendable
    /// Checks every value and returns the settings.
    ///
    /// Contract: no side effects. It may look at the file system (a referenced file must exist
    /// and be readable) and at the environment's paths and variables, but it never creates,
    /// opens for writing, or migrates anything.
    /// - Throws: ``PluginConfigurationError`` naming the key (inside the `config` object), the
    ///   reason and, for numbers, the allowed range.
    func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> Settings
}

/// A plugin the catalog can build from a configuration file entry.
///
/// The catalog decodes the entry's `config` as ``Configuration``, validates it (see
/// ``PluginConfigurationContract``) and builds the plugin from the validated settings, so a bad
/// config fails at start-up (and in `healthgate config check`), not at first use.
public protocol ConfigurablePlugin: Sendable {
    associatedtype Configuration: PluginConfigurationContract
    /// The stable kebab-case name used in configuration files, e.g. `ble-heart-rate`.
    static var kind: String { get }
    /// One line for `healthgate plugins`.
    static var summary: String { get }
    /// Builds the plugin from validated settings. It may do I/O that belongs to the plugin's
    /// start (connecting to a bus, opening files); `config check` never calls it.
    init(settings: Configuration.Settings, environment: PluginEnvironment) throws
}
