import FoundationEssentials
import HealthModel
import HealthStore
import RemoteSinkKit
import GatewayRuntime
public import SampleBus

/// The `mqtt` sink: publishes the store's changes (records in their latest version, and
/// deletions) to an MQTT 5 broker with QoS 1, at least once, following the store's change log
/// (``Follower``): its cursor is committed in the store once every PUBACK of a batch arrived, so
/// a crash costs nothing the store committed, and a batch published again carries the same
/// topics, uuids and bytes.
///
/// libmosquitto is loaded when the sink starts, never by building the catalog or checking a
/// configuration.
public struct MQTTBrokerSink: StoreFollower, ConfigurablePlugin {
    public typealias Configuration = MQTTBrokerConfiguration
    public static let kind = "mqtt"
    public static let summary =
        "Publishes the store's changes to an MQTT 5 broker (QoS 1, one topic per device and type), following the store's log."

    public let configuration: MQTTBrokerConfiguration
    let connection: MQTTSinkConnection
    let follower: Follower

    /// Builds the sink from its settings (its configuration after `validated(in:)`); libmosquitto
    /// is loaded when the sink starts, not here.
    /// - Throws: ``PluginConfigurationError`` for an environment without a store.
    public init(settings configuration: MQTTBrokerConfiguration, environment: PluginEnvironment) throws {
        let library = MosquittoLibrary()
        self.configuration = configuration
        let encoder = MQTTMessageEncoder(
            prefix: configuration.topicPrefix, gateway: MQTTMessageEncoder.level(environment.gatewayName),
            mode: configuration.messages, quantitySeries: configuration.quantitySeries,
            people: Dictionary(environment.participants.compactMap { person in person.mqttTopic.map { (person.name, $0) } }) { first, _ in first })
        let connection = MQTTSinkConnection(
            configuration: configuration, library: library, encoder: encoder, name: environment.name)
        self.connection = connection
        let announcements = environment.store.flatMap { store in
            configuration.homeAssistantDiscovery
                ? HomeAssistantAnnouncements(
                    discovery: HomeAssistantDiscovery(prefix: configuration.homeAssistantPrefix, topics: encoder), store: store)
                : nil
        }
        self.follower = try Follower(
            environment: environment,
            receiver: MQTTReceiver(configuration: configuration, encoder: encoder, connection: connection, announcements: announcements),
            settings: FollowerSettings(configuration, batchInterval: .zero))
    }

    /// Follows the store until a stop, then announces `offline` and disconnects.
    public func run(context: FollowerContext) async throws {
        do {
            try await follower.run(context: context)
        } catch {
            await connection.close(clock: context.clock)
            throw error
        }
        await connection.close(clock: context.clock)
    }
}
