public import Foundation
public import HealthModel
public import SampleBus
import SQLite

/// The `http-repository` sink: delivers records to an HTTP repository at least once, through a
/// durable SQLite outbox.
///
/// Two child tasks share the outbox. The intake takes batches from the inbox, commits them to
/// the outbox, and only then acknowledges them to the bus; under the `block` policy it stops
/// taking while the outbox is full, so back-pressure reaches the bus. The delivery task sends
/// the oldest pending records in batches (up to `batchSize`, or what waited
/// `batchIntervalSeconds`), removes them on 2xx, backs off with jitter on connection
/// errors, timeouts, 5xx, 408 and 429 (honouring Retry-After), keeps them and reports on 401
/// and 403, and bisects a batch refused with another 4xx until the offending records are
/// isolated and dead-lettered. A retried batch has the same uuids and so the same
/// Idempotency-Key.
///
/// `run` returns when the bus finished and the outbox is empty, or when the bus finished and a
/// delivery fails: the remaining records stay in the outbox for the next start.
public struct HTTPRepositorySink: SampleSink, ConfigurablePlugin {
    public typealias Configuration = HTTPRepositoryConfiguration
    public static let kind = "http-repository"
    public static let summary = "Delivers records to an HTTP repository (native JSON, FHIR R4, Open mHealth) via a durable outbox."

    public let configuration: HTTPRepositoryConfiguration
    /// The outbox file's store.
    public let outbox: Outbox
    let endpoint: URL
    let builder: PayloadBuilder
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

    public func accepts(_ record: HealthRecord) -> Bool {
        builder.accepts(record)
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

    // MARK: Intake

    private func intake(inbox: SinkInbox, context: SinkContext, signals: DeliverySignals) async throws {
        let encoder = HealthJSON.makeEncoder()
        var writer = QuantitySampleJSONWriter()
        var blockedSince: Date?
        while !Task.isCancelled {
            if limits.policy == .block, outbox.isFull(now: clock.now(), limits: limits) {
                if blockedSince == nil {
                    blockedSince = clock.now()
                    let statistics = outbox.statistics
                    context.logger.warning(
                        "outbox full (\(statistics.count) records, \(statistics.bytes) bytes): not taking new records "
                            + "until the repository accepts some (policy block)")
                    context.status.setDetail("outboxFull", "true")
                }
                await signals.waitForRoom()
                continue
            }
            if blockedSince != nil {
                blockedSince = nil
                context.status.setDetail("outboxFull", nil)
                context.logger.info("outbox has room again: taking new records")
            }
            guard let batch = await inbox.next(maxCount: configuration.batchSize) else { break }
            var rows: [(id: SampleID, kind: HealthRecordKind, payload: [UInt8])] = []
            rows.reserveCapacity(batch.count)
            for record in batch {
                do {
                    rows.append((record.id, record.kind, try PayloadBuilder.storedPayload(of: record, encoder: encoder, writer: &writer)))
                } catch {
                    // Cannot happen for validated samples (finite values); never drop silently.
                    context.logger.error("cannot encode record \(record.id): \(error); skipped", device: record.device?.displayName)
                    context.status.reportError("cannot encode record \(record.id): \(error)")
                    context.status.recordsDropped(1)
                }
            }
            let result = try await outbox.append(rows, now: clock.now(), limits: limits)
            inbox.acknowledge()
            if result.dropped > 0 {
                context.logger.warning(
                    "OUTBOX FULL: dropped the \(result.dropped) oldest undelivered record(s) to stay within "
                        + "\(limits.maxBytes) bytes / \(Int(limits.maxAge)) s (policy dropOldest); the repository never gets them")
                context.status.recordsDropped(result.dropped)
            }
            publishStatus(context.status)
            signals.recordsArrived()
        }
        signals.finishIntake()
    }

    // MARK: Delivery

    private func deliver(context: SinkContext, signals: DeliverySignals) async throws {
        let interval = Duration.seconds(configuration.batchIntervalSeconds)
        while true {
            try Task.checkCancellation()
            if limits.policy == .dropOldest {
                let dropped = try await outbox.expire(now: clock.now(), limits: limits)
                if dropped > 0 {
                    context.logger.warning(
                        "OUTBOX FULL: dropped \(dropped) record(s) older than \(Int(limits.maxAge)) s (policy dropOldest)")
                    context.status.recordsDropped(dropped)
                    signals.roomFreed()
                }
            }
            let statistics = outbox.statistics
            if statistics.count == 0 {
                if signals.intakeFinished { return }
                await signals.waitForRecords()
                continue
            }
            if statistics.count < configuration.batchSize, !signals.intakeFinished, interval > .zero,
                let oldest = statistics.oldest
            {
                let waited = clock.now().timeIntervalSince(oldest)
                if waited < interval.seconds {
                    await waitForRecords(signals, atMost: .milliseconds(Int64((interval.seconds - waited) * 1000) + 1))
                    continue
                }
            }
            let entries = try await outbox.peek(limit: configuration.batchSize)
            if entries.isEmpty {
                // Rows that are not readable entries: refresh the counts and wait for new ones.
                try await outbox.refresh()
                if outbox.statistics.count > 0 {
                    context.logger.error("\(outbox.statistics.count) unreadable row(s) in \(outbox.path)")
                    return
                }
                continue
            }
            guard try await deliver(entries, context: context, signals: signals) else {
                context.logger.notice(
                    "stopping with \(outbox.statistics.count) record(s) in the outbox; they are delivered at the next start")
                return
            }
        }
    }

    private func waitForRecords(_ signals: DeliverySignals, atMost duration: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await signals.waitForRecords() }
            group.addTask { try? await clock.sleep(for: duration) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Delivers `entries`, bisecting refused batches. Returns false when it gave up because the
    /// gateway is stopping and the repository is failing.
    private func deliver(_ entries: [OutboxEntry], context: SinkContext, signals: DeliverySignals) async throws -> Bool {
        var stack: [[OutboxEntry]] = [entries]
        while var batch = stack.popLast() {
            var attempt = 0
            attempts: while true {
                try Task.checkCancellation()
                if attempt > 0, limits.policy == .dropOldest {
                    // The intake may have dropped some of these while this task slept.
                    batch = try await outbox.stillPending(batch)
                    if batch.isEmpty { break attempts }
                }
                let outcome = await send(batch, context: context)
                switch outcome.result {
                case .delivered:
                    try await outbox.remove(outcome.sent)
                    context.status.recordsHandled(outcome.sent.count, lastDate: outcome.sent.map(\.enqueuedAt).max())
                    context.status.setDetail("authError", nil)
                    if attempt > 0 { context.status.clearError() }
                    publishStatus(context.status)
                    signals.roomFreed()
                    break attempts
                case .rejected(let status, let answer):
                    if outcome.sent.count <= 1 {
                        try await outbox.deadLetter(outcome.sent, status: status, response: answer, now: clock.now())
                        let id = outcome.sent.first.map { "\($0.id)" } ?? "?"
                        context.logger.error("repository refused record \(id) with HTTP \(status): \(answer.prefix(200)); moved to dead letters")
                        context.status.reportError("record \(id) refused with HTTP \(status); see 'healthgate dead-letters list'")
                        publishStatus(context.status)
                        signals.roomFreed()
                    } else {
                        let half = outcome.sent.count / 2
                        context.logger.warning(
                            "repository refused a batch of \(outcome.sent.count) with HTTP \(status); splitting it to find the bad record(s)")
                        stack.append(Array(outcome.sent[half...]))
                        stack.append(Array(outcome.sent[..<half]))
                    }
                    break attempts
                case .retry(let reason, _, let retryAfter):
                    attempt += 1
                    if signals.intakeFinished { return false }
                    let delay = retryAfter ?? policy.delay(attempt: attempt, random: random())
                    context.logger.warning(
                        "delivery of \(outcome.sent.count) record(s) failed (\(reason)); retry \(attempt) in \(delay.seconds) s"
                            + (retryAfter != nil ? " (Retry-After)" : ""))
                    context.status.reportError("delivery failed: \(reason); retrying in \(delay.seconds) s", at: clock.now())
                    try await clock.sleep(for: delay)
                case .authentication(let status):
                    attempt += 1
                    if signals.intakeFinished { return false }
                    let delay = policy.delay(attempt: attempt, random: random())
                    let message = "authentication failed (\(status)): check \(credentials.source); "
                        + "\(outbox.statistics.count) record(s) kept in the outbox, retrying in \(delay.seconds) s"
                    context.logger.error(message)
                    context.status.reportError(message, at: clock.now())
                    context.status.setDetail("authError", "authentication failed (\(status)): check \(credentials.source)")
                    try await clock.sleep(for: delay)
                }
            }
        }
        return true
    }

    private struct Attempt {
        var result: DeliveryOutcome
        /// The entries the request carried (unusable ones are dead-lettered before sending).
        var sent: [OutboxEntry]
    }

    /// Builds and sends one request. Never throws for HTTP or transport failures: they become
    /// outcomes.
    private func send(_ batch: [OutboxEntry], context: SinkContext) async -> Attempt {
        var batch = batch
        let payload = builder.payload(for: batch)
        if !payload.unusable.isEmpty {
            let unusable = Set(payload.unusable.map(\.sequence))
            do {
                try await outbox.deadLetter(payload.unusable, status: 0, response: "the stored record cannot be decoded", now: clock.now())
                context.logger.error("\(unusable.count) outbox record(s) cannot be decoded; moved to dead letters")
            } catch {
                context.logger.error("cannot dead-letter undecodable records: \(error)")
            }
            batch.removeAll { unusable.contains($0.sequence) }
            if batch.isEmpty { return Attempt(result: .delivered, sent: []) }
        }
        var headers: [(name: String, value: String)] = [
            ("Content-Type", builder.contentType), ("Accept", "application/json"),
            ("User-Agent", "healthgate/\(name)"),
        ]
        if builder.format == .native {
            headers.append(("Idempotency-Key", PayloadBuilder.idempotencyKey(for: batch.map(\.id))))
        }
        do {
            if let authorization = try credentials.authorization() {
                headers.append(("Authorization", authorization))
            }
        } catch {
            context.status.setDetail("authError", error.description)
            return Attempt(result: .retry(reason: error.description, status: nil, retryAfter: nil), sent: batch)
        }
        var body = payload.body
        if configuration.gzip {
            do {
                body = try Gzip.compress(body)
                headers.append(("Content-Encoding", "gzip"))
            } catch {
                // Compression failing is a zlib memory error; send the body as it is.
                context.logger.warning("\(error); sending uncompressed")
            }
        }
        let request = HTTPRequest(url: endpoint, headers: headers, body: body, timeout: configuration.timeoutSeconds)
        do {
            let response = try await transport.send(request)
            context.status.setDetail("lastHTTPStatus", String(response.status))
            return Attempt(result: policy.outcome(of: response, now: clock.now()), sent: batch)
        } catch let error as HTTPTransportError {
            context.status.setDetail("lastHTTPStatus", error.isTimeout ? "timeout" : "no answer")
            return Attempt(result: .retry(reason: error.description, status: nil, retryAfter: nil), sent: batch)
        } catch {
            return Attempt(result: .retry(reason: "\(error)", status: nil, retryAfter: nil), sent: batch)
        }
    }

    private func publishStatus(_ status: StatusReporter) {
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
