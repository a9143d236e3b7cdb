public import Foundation
public import HealthModel
public import RemoteOutbox
public import SampleBus
import SQLite

/// The `http-repository` sink: delivers records to an HTTP repository at least once, through a
/// durable SQLite outbox.
///
/// Two child tasks share the outbox (``Outbox``), which holds encoded batches.
///
/// - The **intake** (`HTTPRepositorySink+Intake.swift`) takes a batch from the inbox, forms
///   outbox batches of at most `batchSize` records, encodes each full one at once (body in the
///   configured format, gzip-compressed; the batches concurrently) and commits them all in one
///   transaction, and only then acknowledges them to the bus. Under the `block` policy it stops taking while the outbox is
///   full, so back-pressure reaches the bus.
/// - The **delivery** (`HTTPRepositorySink+Delivery.swift`) seals smaller batches once they add
///   up to `batchSize` or waited `batchIntervalSeconds` (merging and encoding them once),
///   then sends the oldest sealed batch as stored, under its stored key, and acts on the
///   ``DeliveryDecision`` that ``DeliveryPolicy/decision(for:batchCount:attempt:stopping:random:)``
///   makes of the answer: delete on 2xx, back off on connection errors, timeouts, 5xx, 408 and
///   429 (honouring Retry-After) and on 401/403, split a batch refused with another 4xx into
///   halves with derived keys, dead-letter a refused single record.
///
/// `run` returns when the bus finished and the outbox is empty, or when the bus finished and a
/// delivery fails (a backoff under way is cut short): the remaining batches stay in the outbox
/// for the next start.
public struct HTTPRepositorySink: SampleSink, ConfigurablePlugin {
    public typealias Configuration = HTTPRepositoryConfiguration
    public static let kind = "http-repository"
    public static let summary = "Delivers records to an HTTP repository (native JSON, FHIR R4, Open mHealth) via a durable outbox."

    public let configuration: HTTPRepositoryConfiguration
    /// The outbox file's store.
    public let outbox: Outbox
    let endpoint: URL
    let builder: PayloadBuilder
    let encoder: BatchEncoder
    let policy: DeliveryPolicy
    let limits: OutboxLimits
    let credentials: Credentials
    let transport: any HTTPTransport
    let clock: any GatewayClock
    let random: @Sendable () -> Double
    let name: String

    /// The outbox path for an instance: `<stateDirectory>/<name>-outbox.sqlite`.
    public static func outboxPath(stateDirectory: URL, name: String) -> String {
        stateDirectory.appendingPathComponent("\(name)-outbox.sqlite").path
    }

    /// Creates the sink with the libcurl transport. libcurl itself is loaded when the sink starts
    /// (``run(inbox:context:)``), not here: building the catalog or checking a configuration maps
    /// nothing, and a gateway without this sink never loads libcurl.
    /// - Throws: as ``init(configuration:environment:transport:random:)``.
    public init(configuration: HTTPRepositoryConfiguration, environment: PluginEnvironment) throws {
        try self.init(
            configuration: configuration, environment: environment,
            transport: CurlTransport(library: CurlLibrary(), caFile: configuration.caFile),
            random: { Double.random(in: 0..<1) })
    }

    /// Creates the sink with an injected transport and random source (a value in 0..<1 per
    /// call, for backoff jitter).
    /// - Throws: ``PluginConfigurationError`` for a bad setting; ``SQLiteError`` when the outbox
    ///   cannot be opened.
    public init(
        configuration: HTTPRepositoryConfiguration, environment: PluginEnvironment, transport: any HTTPTransport,
        random: @escaping @Sendable () -> Double
    ) throws {
        self.endpoint = try configuration.validated()
        self.configuration = configuration
        self.name = environment.name
        self.outbox = try Outbox(path: Self.outboxPath(stateDirectory: environment.paths.stateDirectory, name: environment.name))
        self.builder = PayloadBuilder(format: configuration.format, patientReference: configuration.patientReference)
        let logger = environment.logger
        self.encoder = BatchEncoder(builder: builder, gzip: configuration.gzip, deflate: DeflateLibrary()) { error in
            logger.warning("\(error); storing the batch uncompressed")
        }
        self.policy = DeliveryPolicy(
            initialDelay: .seconds(configuration.retry.initialDelaySeconds),
            maximumDelay: .seconds(configuration.retry.maxDelaySeconds), jitter: configuration.retry.jitter)
        self.limits = OutboxLimits(
            maxBytes: configuration.outbox.maxBytes, maxAge: configuration.outbox.maxAgeSeconds,
            policy: configuration.outbox.policy)
        self.credentials = Credentials(auth: configuration.auth, variables: environment.variables)
        self.transport = transport
        self.clock = environment.clock
        self.random = random
    }

    /// What the format can carry, except provisional versions (a heartbeat series as it grows,
    /// metadata `healthgate.provisional`): the outbox keys records by uuid and the repository
    /// de-duplicates by uuid, so only the finished version, with the same uuid, is sent.
    public func accepts(_ record: HealthRecord) -> Bool {
        if case .heartbeatSeries(let series) = record, series.metadata[.provisional] == .bool(true) { return false }
        return builder.accepts(record)
    }

    /// Delivers until the bus finishes (see the type's documentation).
    ///
    /// First readies the transport (``HTTPTransport/prepare()``: the libcurl transport loads
    /// libcurl here). When that fails, the error is logged and becomes the status's last error
    /// right away, and the sink runs on as during an outage: records go into the outbox, each
    /// delivery attempt fails with the same error and is retried with backoff (the libcurl
    /// transport tries to load the library again each time), and a stop leaves the records in
    /// the outbox for the next start.
    /// - Throws: outbox (SQLite) errors; `CancellationError`.
    public func run(inbox: SinkInbox, context: SinkContext) async throws {
        do {
            try await transport.prepare()
        } catch {
            // Not thrown: the gateway would restart the sink over and over while its bounded
            // queue filled and, under the default `block` policy, stalled every other sink. The
            // durable outbox is the place for records that cannot be sent yet.
            context.logger.error(
                "\(error). Records are kept in the outbox \(outbox.path) and delivery is retried with backoff")
            context.status.reportError("\(error)", at: clock.now())
        }
        if configuration.gzip {
            // Loaded here, not at the first batch, so a missing libdeflate is told once at start.
            do {
                try encoder.deflate.load()
            } catch {
                context.logger.notice("\(error)")
            }
        }
        let signals = DeliverySignals()
        publishStatus(context.status)
        if outbox.statistics.count > 0 {
            context.logger.info("\(outbox.statistics.count) record(s) pending in \(outbox.path) from an earlier run")
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await intake(inbox: inbox, context: context, signals: signals) }
            group.addTask { try await deliver(context: context, signals: signals) }
            do {
                while try await group.next() != nil {}
            } catch {
                group.cancelAll()
                throw error
            }
        }
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
    }
}
