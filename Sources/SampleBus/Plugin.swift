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
}

extension SampleSink {
    public func accepts(_ record: HealthRecord) -> Bool { true }
    public var checkpointReader: (any SourceCheckpointReader)? { nil }
}

/// A plugin the catalog can build from a configuration file entry.
///
/// The initializer validates the configuration up front and throws ``PluginConfigurationError``
/// (with the key that is wrong) so that a bad config fails at start-up, not at first use.
public protocol ConfigurablePlugin: Sendable {
    associatedtype Configuration: Decodable & Sendable
    /// The stable kebab-case name used in configuration files, e.g. `ble-heart-rate`.
    static var kind: String { get }
    /// One line for `healthgate plugins`.
    static var summary: String { get }
    init(configuration: Configuration, environment: PluginEnvironment) throws
}

/// A configuration value that decodes but cannot work, reported with the key that is wrong.
public struct PluginConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The key path inside the plugin's `config` object, e.g. `devices[0].address`.
    public var keyPath: String
    public var reason: String

    public init(keyPath: String, reason: String) {
        self.keyPath = keyPath
        self.reason = reason
    }

    public var description: String { "\(keyPath): \(reason)" }
}
