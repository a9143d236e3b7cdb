import AsyncPrimitives
import Foundation
import RemoteOutbox
import SampleBus

extension MQTTBrokerSink {
    /// What one attempt at a batch came to.
    enum PublishOutcome: Sendable {
        /// Every message of the batch got a PUBACK that accepts it.
        case acknowledged
        /// Not connected, the connection dropped, a PUBACK did not come in time or refused a
        /// message: the whole batch is published again after a backoff.
        case failed(String)
        /// The stored messages cannot be read back.
        case damaged
    }

    /// Publishes the outbox's batches, oldest first, until the intake finished and the outbox
    /// is empty, or until a graceful stop meets an unreachable broker.
    func deliver(context: SinkContext, signals: DeliverySignals, connection: MQTTSinkConnection) async throws {
        var failures = 0
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
            guard let head = try await outbox.head() else {
                if signals.intakeFinished { return }
                try await signals.waitForRecords()
                continue
            }
            if !head.sealed {
                // Records moved back from the dead letters: sealed here, once, like any batch.
                let encoder = encoder
                let unusable = try await outbox.seal(maxRecords: configuration.batchSize, now: clock.now()) { encoder.body(for: $0) }
                if unusable > 0 {
                    context.logger.error("\(unusable) outbox record(s) cannot be decoded; moved to dead letters")
                    context.status.reportError("\(unusable) outbox record(s) cannot be decoded; see 'healthgate dead-letters list'")
                    publishStatus(context.status)
                }
                continue
            }
            guard let batch = try await outbox.batch(head.id) else { continue }
            switch await publish(batch, context: context, connection: connection) {
            case .acknowledged:
                try await outbox.remove(batch.id)
                context.status.recordsHandled(batch.count, lastDate: batch.enqueuedAt)
                if failures > 0 {
                    context.logger.info("broker reachable again: published a batch of \(batch.count) after \(failures) failed attempt(s)")
                    context.status.clearError()
                    failures = 0
                }
                publishStatus(context.status)
                signals.roomFreed()
            case .damaged:
                try await outbox.deadLetter(batch.id, status: 0, response: "the stored messages are damaged", now: clock.now())
                context.logger.error("the stored messages of a batch of \(batch.count) are damaged; moved to dead letters")
                context.status.reportError("a damaged batch moved to dead letters; see 'healthgate dead-letters list'")
                publishStatus(context.status)
                signals.roomFreed()
            case .failed(let reason):
                failures += 1
                if signals.intakeFinished {
                    context.logger.notice(
                        "stopping with \(outbox.statistics.count) record(s) in the outbox (\(reason)); they are published at the next start")
                    context.status.reportError("publishing failed: \(reason); stopping", at: clock.now())
                    return
                }
                let retry = configuration.retry
                let seconds = min(retry.maxDelaySeconds, retry.initialDelaySeconds * pow(2, Double(min(failures - 1, 30))))
                context.logger.warning(
                    "publishing \(batch.count) record(s) failed (\(reason)); retry \(failures) in \(ConfigurationDecoder.format(seconds)) s")
                context.status.reportError("publishing failed: \(reason); retrying", at: clock.now())
                guard try await backOff(for: .milliseconds(Int64(seconds * 1000)), signals: signals) else {
                    context.logger.notice(
                        "stopping with \(outbox.statistics.count) record(s) in the outbox; they are published at the next start")
                    return
                }
            }
        }
    }

    /// Waits `delay` before a retry; false, at once, when the inbox ends first (a graceful stop
    /// never waits on a backoff).
    private func backOff(for delay: Duration, signals: DeliverySignals) async throws -> Bool {
        let outcome = try await race(sleep: { [clock] in try await clock.sleep(for: delay) }) {
            try await signals.waitForIntakeEnd()
        }
        if case .timedOut = outcome { return true }
        return false
    }

    /// Publishes the stored messages of `batch` with QoS 1 and waits for every PUBACK. Never
    /// throws: failures become outcomes (a cancellation shows at the caller's next check).
    private func publish(_ batch: OutboxBatch, context: SinkContext, connection: MQTTSinkConnection) async -> PublishOutcome {
        guard let messages = MQTTMessageFraming.decode(batch.body.bytes) else { return .damaged }
        let client: MQTTClient
        do {
            client = try connection.connected(name: name)
        } catch {
            return .failed("\(error)")
        }
        let events = client.events
        let timeout = Duration.milliseconds(Int64(configuration.ackTimeoutSeconds * 1000))
        if !events.state.value.connected {
            _ = try? await race(sleep: { [clock] in try await clock.sleep(for: timeout) }) {
                try await events.state.wait { $0.connected || $0.refused }
            }
            guard events.state.value.connected else {
                let reason = events.state.value.lastError ?? "not connected to \(configuration.host):\(configuration.port)"
                context.status.setDetail("connection", reason)
                return .failed(reason)
            }
        }
        context.status.setDetail("connection", "connected")
        let connections = events.state.value.connections
        var mids: [Int32] = []
        for message in messages {
            do {
                mids.append(try client.publish(message))
            } catch {
                events.forget(mids)
                return .failed("\(error)")
            }
        }
        let wanted = Set(mids)
        _ = try? await race(sleep: { [clock] in try await clock.sleep(for: timeout) }) {
            try await events.state.wait { state in
                !state.connected || state.connections != connections || wanted.allSatisfy { state.acknowledged[$0] != nil }
            }
        }
        let state = events.state.value
        events.forget(mids)
        if wanted.allSatisfy({ state.acknowledged[$0] != nil }) {
            if let refusal = mids.compactMap({ state.acknowledged[$0] }).first(where: { $0 >= 128 }) {
                return .failed("the broker refused a message with reason code \(refusal)")
            }
            return .acknowledged
        }
        if !state.connected || state.connections != connections {
            return .failed(state.lastError ?? "the connection to the broker was lost")
        }
        return .failed("no PUBACK within \(ConfigurationDecoder.format(configuration.ackTimeoutSeconds)) s")
    }
}
