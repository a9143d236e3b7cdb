public import GatewayRuntime

/// The configuration of a remote sink: the keys every remote sink has for following the store
/// (`batchSize`, `batchIntervalSeconds` where the sink waits for full batches, `maxInFlight`,
/// `follow`, `retry`) are declared here once (``followingKeys(batchSize:batchInterval:)``), and
/// each sink declares its own beside them.
public protocol RemoteSinkConfiguration: DeclaredConfiguration {
    /// The most changes in one batch.
    var batchSize: Int { get set }
    /// How many batches may wait for their answers at once.
    var maxInFlight: Int { get set }
    var follow: FollowConfiguration { get set }
    var retry: RetryConfiguration { get set }
}

extension RemoteSinkConfiguration {
    /// The old names of the keys every remote sink shares, suggested when they are used: the
    /// outbox is gone (the store is the log every remote sink follows), and its bounds are the
    /// `follow` block's.
    public static var followingRenamedKeys: [String: String] { ["outbox": "follow"] }

    /// The keys of following the store: `batchSize` (in the sink's own `range`),
    /// `batchIntervalSeconds` when the sink has a batch interval (`batchInterval`; nil for a sink
    /// that sends what it has at once), `maxInFlight`, `follow` and `retry`.
    public static func followingKeys(
        batchSize range: ClosedRange<Int>, batchInterval: (any WritableKeyPath<Self, Double> & Sendable)?
    ) -> [ConfigurationKey<Self>] {
        var keys = [
            ConfigurationKey("batchSize", \Self.batchSize, .whole(range, unit: "records"), "The most changes in one batch"),
            ConfigurationKey(
                "maxInFlight", \Self.maxInFlight, .whole(FollowerSettings.inFlightRange, unit: "batches"),
                "How many batches may wait for their answer at once"),
            ConfigurationKey("follow", \Self.follow, "Following the store's change log"),
            ConfigurationKey("retry", \Self.retry, "The backoff after a failed delivery"),
        ]
        if let batchInterval {
            keys.insert(
                ConfigurationKey(
                    "batchIntervalSeconds", batchInterval, .number(FollowerSettings.batchIntervalRange, unit: "seconds"),
                    "How long a batch smaller than batchSize waits for more changes before it is sent"),
                at: 1)
        }
        return keys
    }

    /// Checks the values against the declared ranges and the rules that tie keys together in
    /// the shared blocks: what the gateway checks of a file before and after decoding it, for a
    /// configuration built in code.
    public func checkFollowingKeys() throws(PluginConfigurationError) {
        try Self.configurationSchema.check(configurationJSON)
        try retry.validate()
    }
}
