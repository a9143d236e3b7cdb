import AsyncPrimitives
import Foundation
import RemoteOutbox
import SampleBus

extension MQTTBrokerSink {
    /// What waiting for a batch's PUBACKs came to.
    enum PublishOutcome: Sendable {
        /// Every message of the batch got a PUBACK that accepts it.
        case acknowledged
        /// The connection dropped, a PUBACK did not come in time or refused a message: every
        /// batch in flight is published again after a backoff.
        case failed(String)
    }

    /// A batch whose messages were handed to libmosquitto and whose PUBACKs are awaited.
    struct InFlight: Sendable {
        var batch: OutboxBatch
        var mids: [Int32]
        /// ``MQTTConnectionEvents/State/connections`` when it was published: a change means the
        /// connection was lost in between, and with it the PUBACKs.
        var connections: Int
    }

    /// How many batches are published ahead of the oldest one's PUBACKs. With one, every batch
    /// ends with an idle connection: the broker's last PUBACK waits for the gateway's delayed
    /// ACK (a broker's Nagle, 40 ms on Linux), which capped the sink at 100 records per 45 ms.
    static let window = 4

    /// Publishes the outbox's batches, oldest first, up to ``window`` at a time, and removes
    /// each, in order, when all its PUBACKs arrived; until the intake finished and the outbox is
    /// empty, or until a graceful stop meets an unreachable broker. A failure publishes every
    /// batch in flight again (same uuids, same bytes) after a backoff.
    func deliver(context: SinkContext, signals: DeliverySignals, connection: MQTTSinkConnection) async throws {
        var failures = 0
        var inFlight: [InFlight] = []
        while true {
            try Task.checkCancellation()
            if inFlight.isEmpty {
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
                guard let batch = head.batch else { continue }
                switch await publish(batch, waitingForConnection: true, context: context, connection: connection) {
                case .published(let published):
                    inFlight.append(published)
                case .damaged:
                    try await outbox.deadLetter(batch.id, status: 0, response: "the stored messages are damaged", now: clock.now())
                    context.logger.error("the stored messages of a batch of \(batch.count) are damaged; moved to dead letters")
                    context.status.reportError("a damaged batch moved to dead letters; see 'healthgate dead-letters list'")
                    publishStatus(context.status)
                    signals.roomFreed()
                    continue
                case .failed(let reason):
                    guard try await backOff(after: reason, records: batch.count, failures: &failures, context: context, signals: signals)
                    else { return }
                    continue
                }
            }
            // The batches that follow, when already sealed: ids grow by one per batch, and a gap
            // (a batch dead-lettered or dropped) only ends the window until the head moves on.
            while inFlight.count < Self.window, let last = inFlight.last, let next = try await outbox.batch(last.batch.id + 1) {
                guard case .published(let published) = await publish(
                    next, waitingForConnection: false, context: context, connection: connection)
                else { break }
                inFlight.append(published)
            }
            let oldest = inFlight[0]
            switch await acknowledgement(of: oldest, connection: connection) {
            case .acknowledged:
                inFlight.removeFirst()
                try await outbox.remove(oldest.batch.id)
                context.status.recordsHandled(oldest.batch.count, lastDate: oldest.batch.enqueuedAt)
                if failures > 0 {
                    context.logger.info(
                        "broker reachable again: published a batch of \(oldest.batch.count) after \(failures) failed attempt(s)")
                    context.status.clearError()
                    failures = 0
                }
                publishStatus(context.status)
                signals.roomFreed()
            case .failed(let reason):
                for batch in inFlight { connection.forget(batch.mids) }
                inFlight = []
                guard try await backOff(after: reason, records: oldest.batch.count, failures: &failures, context: context, signals: signals)
                else { return }
            }
        }
    }

    /// Reports a failed attempt and waits out the backoff; false when the sink is to stop (the
    /// intake finished: a graceful stop never waits on an unreachable broker).
    private func backOff(
        after reason: String, records: Int, failures: inout Int, context: SinkContext, signals: DeliverySignals
    ) async throws -> Bool {
        failures += 1
        if signals.intakeFinished {
            context.logger.notice(
                "stopping with \(outbox.statistics.count) record(s) in the outbox (\(reason)); they are published at the next start")
            context.status.reportError("publishing failed: \(reason); stopping", at: clock.now())
            return false
        }
        let retry = configuration.retry
        let seconds = min(retry.maxDelaySeconds, retry.initialDelaySeconds * pow(2, Double(min(failures - 1, 30))))
        context.logger.warning(
            "publishing \(records) record(s) failed (\(reason)); retry \(failures) in \(ConfigurationDecoder.format(seconds)) s")
        context.status.reportError("publishing failed: \(reason); retrying", at: clock.now())
        guard try await backOff(for: .milliseconds(Int64(seconds * 1000)), signals: signals) else {
            context.logger.notice(
                "stopping with \(outbox.statistics.count) record(s) in the outbox; they are published at the next start")
            return false
        }
        return true
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

    /// What handing a batch to libmosquitto came to.
    enum PublishStart: Sendable {
        case published(InFlight)
        /// Not connected, or libmosquitto refused a message.
        case failed(String)
        /// The stored messages cannot be read back.
        case damaged
    }

    /// Publishes the stored messages of `batch` with QoS 1, awaiting their PUBACKs. Waits up to
    /// `ackTimeoutSeconds` for a connection when `waitingForConnection`. Never throws: failures
    /// become outcomes (a cancellation shows at the caller's next check).
    private func publish(
        _ batch: OutboxBatch, waitingForConnection: Bool, context: SinkContext, connection: MQTTSinkConnection
    ) async -> PublishStart {
        guard let messages = MQTTMessageFraming.decode(batch.body.bytes) else { return .damaged }
        let client: MQTTClient
        do {
            client = try connection.connected(name: name)
        } catch {
            return .failed("\(error)")
        }
        let events = client.events
        if !events.state.value.connected {
            guard waitingForConnection else { return .failed("not connected") }
            let timeout = Duration.milliseconds(Int64(configuration.ackTimeoutSeconds * 1000))
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
        mids.reserveCapacity(messages.count)
        for message in messages {
            do {
                mids.append(try events.tracking { try client.publish(message) })
            } catch {
                events.forget(mids)
                return .failed("\(error)")
            }
        }
        return .published(InFlight(batch: batch, mids: mids, connections: connections))
    }

    /// Waits up to `ackTimeoutSeconds` for every PUBACK of `batch`; `.acknowledged` when all
    /// arrived and accept their message. The mids are forgotten either way.
    private func acknowledgement(of batch: InFlight, connection: MQTTSinkConnection) async -> PublishOutcome {
        guard let events = connection.events else { return .failed("not connected") }
        let timeout = Duration.milliseconds(Int64(configuration.ackTimeoutSeconds * 1000))
        let wanted = batch.mids
        let connections = batch.connections
        _ = try? await race(sleep: { [clock] in try await clock.sleep(for: timeout) }) {
            // Checked at every PUBACK; they come in order, so the last mid first makes it cheap.
            try await events.state.wait { state in
                !state.connected || state.connections != connections
                    || wanted.reversed().allSatisfy { state.acknowledged[$0] != nil }
            }
        }
        let state = events.state.value
        events.forget(wanted)
        if wanted.allSatisfy({ state.acknowledged[$0] != nil }) {
            if let refusal = wanted.compactMap({ state.acknowledged[$0] }).first(where: { $0 >= 128 }) {
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
