import AsyncPrimitives
import Foundation
import HealthModel
import RemoteOutbox
import SampleBus

extension HTTPRepositorySink {
    /// Sends the outbox's batches, oldest first, until the intake finished and the outbox is
    /// empty, or until a graceful stop meets a failing repository.
    func deliver(context: SinkContext, signals: DeliverySignals) async throws {
        let interval = Duration.seconds(configuration.batchIntervalSeconds)
        let batchSize = max(1, configuration.batchSize)
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
            // Read before the outbox: once the intake finished, everything it stored is visible to
            // `head()`. Read after, the intake could store a batch and finish between the two reads,
            // and the delivery would stop with that batch unsent.
            let intakeFinished = signals.intakeFinished
            guard let head = try await outbox.head() else {
                if intakeFinished { return }
                try await signals.waitForRecords()
                continue
            }
            if !head.sealed {
                // Merge small batches until they fill one, or until the oldest waited the interval.
                let statistics = outbox.statistics
                if statistics.unsealed < batchSize, !signals.intakeFinished, interval > .zero,
                    let oldest = statistics.oldestUnsealed
                {
                    let waited = clock.now().timeIntervalSince(oldest)
                    if waited < interval.seconds {
                        try await waitForRecords(signals, atMost: .milliseconds(Int64((interval.seconds - waited) * 1000) + 1))
                        continue
                    }
                }
                let encoder = encoder
                let unusable = try await outbox.seal(maxRecords: batchSize, now: clock.now()) { encoder.body(for: $0) }
                if unusable > 0 {
                    context.logger.error("\(unusable) outbox record(s) cannot be encoded; moved to dead letters")
                    context.status.reportError("\(unusable) outbox record(s) cannot be encoded; see 'healthgate dead-letters list'")
                    publishStatus(context.status)
                }
                continue
            }
            guard try await deliver(head: head.id, read: head.batch, context: context, signals: signals) else {
                context.logger.notice(
                    "stopping with \(outbox.statistics.count) record(s) in the outbox; they are delivered at the next start")
                return
            }
        }
    }

    private func waitForRecords(_ signals: DeliverySignals, atMost duration: Duration) async throws {
        _ = try await race(sleep: { [clock] in try await clock.sleep(for: duration) }) {
            try await signals.waitForRecords()
        }
    }

    /// Waits `delay` before a retry. Returns false, at once, when a graceful stop is asked for
    /// before it ends (the inbox ended), so that a stop never waits on a backoff.
    /// - Throws: `CancellationError`.
    func backOff(for delay: Duration, signals: DeliverySignals) async throws -> Bool {
        let outcome = try await race(sleep: { [clock] in try await clock.sleep(for: delay) }) {
            try await signals.waitForIntakeEnd()
        }
        if case .timedOut = outcome { return true }
        return false
    }

    /// Delivers the sealed batch `id` (`read` is it as the outbox's head gave it), and the halves
    /// it is split into when refused. Returns false when it gave up because the gateway is
    /// stopping and the repository is failing.
    private func deliver(head id: Int64, read: OutboxBatch?, context: SinkContext, signals: DeliverySignals) async throws -> Bool {
        var stack: [Int64] = [id]
        var read = read
        while let id = stack.popLast() {
            var attempt = 0
            attempts: while true {
                try Task.checkCancellation()
                // The first attempt sends the head as the outbox gave it; any other reads the batch
                // again: nil once delivered, or dropped by `dropOldest` while this task backed off.
                let current: OutboxBatch?
                if let first = read, first.id == id {
                    current = first
                    read = nil
                } else {
                    current = try await outbox.batch(id)
                }
                guard let batch = current else { break attempts }
                attempt += 1
                let outcome = await send(batch, context: context)
                let decision = policy.decision(
                    for: outcome, batchCount: batch.count, attempt: attempt, stopping: signals.intakeFinished, random: random())
                switch decision {
                case .acknowledge:
                    try await outbox.remove(batch.id)
                    context.status.recordsHandled(batch.count, lastDate: batch.enqueuedAt)
                    context.status.setDetail("authError", nil)
                    if attempt > 1 { context.status.clearError() }
                    publishStatus(context.status)
                    signals.roomFreed()
                    break attempts
                case .deadLetter(let status, let answer):
                    let ids = try await outbox.records(of: batch.id).map { "\($0.id)" }.joined(separator: ", ")
                    try await outbox.deadLetter(batch.id, status: status, response: answer, now: clock.now())
                    context.logger.error("repository refused record \(ids) with HTTP \(status): \(answer.prefix(200)); moved to dead letters")
                    context.status.reportError("record \(ids) refused with HTTP \(status); see 'healthgate dead-letters list'")
                    publishStatus(context.status)
                    signals.roomFreed()
                    break attempts
                case .bisect(let status, _):
                    context.logger.warning(
                        "repository refused a batch of \(batch.count) with HTTP \(status); splitting it to find the bad record(s)")
                    let encoder = encoder
                    let halves = try await outbox.split(batch, now: clock.now()) { encoder.body(for: $0) }
                    stack.append(contentsOf: halves.reversed())
                    break attempts
                case .retry(let delay, let reason, let fromServer):
                    context.logger.warning(
                        "delivery of \(batch.count) record(s) failed (\(reason)); retry \(attempt) in \(delay.seconds) s"
                            + (fromServer ? " (Retry-After)" : ""))
                    context.status.reportError("delivery failed: \(reason); retrying in \(delay.seconds) s", at: clock.now())
                    guard try await backOff(for: delay, signals: signals) else { return false }
                case .reauthenticate(let delay, let status):
                    let message = "authentication failed (\(status)): check \(credentials.source); "
                        + "\(outbox.statistics.count) record(s) kept in the outbox, retrying in \(delay.seconds) s"
                    context.logger.error(message)
                    context.status.reportError(message, at: clock.now())
                    context.status.setDetail("authError", "authentication failed (\(status)): check \(credentials.source)")
                    guard try await backOff(for: delay, signals: signals) else { return false }
                case .stop(let reason):
                    context.status.reportError("delivery failed: \(reason); stopping", at: clock.now())
                    return false
                }
            }
        }
        return true
    }

    /// Sends one stored batch as it is. Never throws for HTTP or transport failures: they become
    /// outcomes.
    private func send(_ batch: OutboxBatch, context: SinkContext) async -> DeliveryOutcome {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", builder.contentType), ("Accept", "application/json"),
            ("User-Agent", "healthgate/\(name)"), ("Idempotency-Key", batch.key),
        ]
        if let encoding = batch.body.contentEncoding { headers.append(("Content-Encoding", encoding)) }
        do {
            if let authorization = try credentials.authorization() {
                headers.append(("Authorization", authorization))
            }
        } catch {
            context.status.setDetail("authError", error.description)
            return .retry(reason: error.description, status: nil, retryAfter: nil)
        }
        let request = HTTPRequest(url: endpoint, headers: headers, body: Data(batch.body.bytes), timeout: configuration.timeoutSeconds)
        do {
            let response = try await transport.send(request)
            context.status.setDetail("lastHTTPStatus", String(response.status))
            return policy.outcome(of: response, now: clock.now())
        } catch let error as HTTPTransportError {
            context.status.setDetail("lastHTTPStatus", error.isTimeout ? "timeout" : "no answer")
            return DeliveryPolicy.outcome(of: error)
        } catch {
            return .retry(reason: "\(error)", status: nil, retryAfter: nil)
        }
    }
}
