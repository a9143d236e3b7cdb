import FoundationEssentials
public import GatewayRuntime
public import SampleBus

extension Follower {
    /// The follower of a remote sink in the gateway: named after the sink instance, following the
    /// environment's store, and importing at its first start the outbox the sink kept in the
    /// version before followers (``LegacyOutbox/path(stateDirectory:name:)``).
    /// - Throws: ``PluginConfigurationError`` when the environment has no store.
    public init(
        environment: PluginEnvironment, receiver: any RemoteReceiver, settings: FollowerSettings,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) throws(PluginConfigurationError) {
        guard let store = environment.store else {
            throw PluginConfigurationError(keyPath: "(sink)", reason: "the gateway opened no store for this sink to follow")
        }
        self.init(
            name: environment.name, store: store, receiver: receiver, settings: settings,
            legacyOutbox: LegacyOutbox.path(stateDirectory: environment.paths.stateDirectory, name: environment.name),
            random: random)
    }
}

extension FollowerSettings {
    /// The settings a remote sink's configuration gives its follower; `batchInterval` is the
    /// sink's (zero for a sink that sends what it has at once).
    public init(_ configuration: some RemoteSinkConfiguration, batchInterval: Duration) {
        self.init(
            batchSize: configuration.batchSize, batchInterval: batchInterval, maxInFlight: configuration.maxInFlight,
            follow: configuration.follow, retry: configuration.retry)
    }
}
