public import Foundation
public import HealthModel
public import RemoteOutbox
public import SampleBus

/// The `mqtt` sink: publishes records to an MQTT 5 broker with QoS 1, at least once, through the
/// durable outbox every remote sink shares (``Outbox``).
///
/// - The **intake** (`MQTTBrokerSink+Intake.swift`) takes records from the inbox, encodes each
///   outbox batch's messages once (topics, uuids, HealthJSON payloads: ``MQTTMessageEncoder``),
///   commits them in one transaction and only then acknowledges them to the bus.
/// - The **delivery** (`MQTTBrokerSink+Delivery.swift`) publishes the oldest batch's messages as
///   stored and removes the batch only when a PUBACK arrived for every one of them; a lost
///   connection, a PUBACK timeout or a refusal means the whole batch is published again, with the
///   same uuids and bytes, after a backoff.
///
/// libmosquitto is loaded when the sink starts (``run(inbox:context:)``), never by building the
/// catalog or checking a configuration.
public struct MQTTBrokerSink: SampleSink, ConfigurablePlugin {
    public typealias Configuration = MQTTBrokerConfiguration
    public static let kind = "mqtt"
    public static let summary = "Publishes records to an MQTT 5 broker (QoS 1, one topic per device and type) via a durable outbox."

    public let configuration: MQTTBrokerConfiguration
    /// The outbox file's store.
    public let outbox: Outbox
    let library: MosquittoLibrary
    let encoder: MQTTMessageEncoder
    let limits: OutboxLimits
    let clock: any GatewayClock
    let name: String

    /// The outbox path for an instance: `<stateDirectory>/<name>-outbox.sqlite`.
    public static func outboxPath(stateDirectory: URL, name: String) -> String {
        stateDirectory.appendingPathComponent("\(name)-outbox.sqlite").path
    }

    /// Builds the sink from validated settings; the catalog's entry point. Opens the outbox.
    /// - Throws: ``SQLiteError`` when the outbox cannot be opened.
    public init(settings: MQTTBrokerConfiguration, environment: PluginEnvironment) throws {
        try self.init(configuration: settings, environment: environment, library: MosquittoLibrary())
    }

    /// Creates the sink with the given library handle (a path that does not load, in tests).
    /// - Throws: ``PluginConfigurationError`` for a bad setting; ``SQLiteError`` when the outbox
    ///   cannot be opened.
    public init(configuration: MQTTBrokerConfiguration, environment: PluginEnvironment, library: MosquittoLibrary) throws {
        try configuration.validated()
        self.configuration = configuration
        self.name = environment.name
        self.library = library
        self.outbox = try Outbox(path: Self.outboxPath(stateDirectory: environment.paths.stateDirectory, name: environment.name))
        self.encoder = MQTTMessageEncoder(
            prefix: configuration.topicPrefix, gateway: MQTTMessageEncoder.level(environment.gatewayName),
            mode: configuration.messages)
        self.limits = OutboxLimits(
            maxBytes: configuration.outbox.maxBytes, maxAge: configuration.outbox.maxAgeSeconds,
            policy: configuration.outbox.policy)
        self.clock = environment.clock
    }

    /// Provisional versions (a heartbeat series as it grows) are left out: only the finished
    /// version, with the same uuid, is published.
    public func accepts(_ record: HealthRecord) -> Bool {
        if case .heartbeatSeries(let series) = record, series.metadata[.provisional] == .bool(true) { return false }
        return true
    }

    /// Publishes until the bus finishes and the outbox is empty, or until the bus finished and
    /// the broker is unreachable (the remaining batches stay in the outbox for the next start).
    ///
    /// When libmosquitto cannot be loaded or the password file read, the error is logged and
    /// shown in status, and the sink runs on as during an outage: records go into the outbox and
    /// loading is tried again with backoff.
    /// - Throws: outbox (SQLite) errors; `CancellationError`.
    public func run(inbox: SinkInbox, context: SinkContext) async throws {
        let signals = DeliverySignals()
        publishStatus(context.status)
        if outbox.statistics.count > 0 {
            context.logger.info("\(outbox.statistics.count) record(s) pending in \(outbox.path) from an earlier run")
        }
        let connection = MQTTSinkConnection(sink: self)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await intake(inbox: inbox, context: context, signals: signals) }
                group.addTask { try await deliver(context: context, signals: signals, connection: connection) }
                do {
                    while try await group.next() != nil {}
                } catch {
                    group.cancelAll()
                    throw error
                }
            }
        } catch {
            await connection.close(clock: clock)
            throw error
        }
        await connection.close(clock: clock)
    }

    func publishStatus(_ status: StatusReporter) {
        let statistics = outbox.statistics
        status.setDetail("outboxDepth", String(statistics.count))
        status.setDetail("outboxBytes", String(statistics.bytes))
        status.setDetail(
            "outboxOldestAgeSeconds",
            statistics.oldest.map { String(Int(max(0, clock.now().timeIntervalSince($0)))) } ?? "0")
        status.setDetail("deadLetters", String(statistics.deadLetters))
        status.setDetail("outbox", outbox.path)
        status.setDetail("broker", "\(configuration.host):\(configuration.port)")
    }
}
