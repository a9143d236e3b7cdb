import Foundation
import HealthModel
import RemoteOutbox
import SampleBus

extension HTTPRepositorySink {
    /// Takes batches from the inbox into the outbox until the inbox ends, then tells the
    /// delivery (``DeliverySignals/finishIntake()``), which also ends a backoff under way.
    ///
    /// One inbox batch is one outbox transaction: its records, cut into batches of at most
    /// `batchSize`; a full one is encoded here, once, and stored sealed, a smaller one is stored
    /// unsealed for the delivery to merge with the next ones. The bus is acknowledged after
    /// the commit, so a crash loses nothing the bus was told was taken.
    func intake(inbox: SinkInbox, context: SinkContext, signals: DeliverySignals) async throws {
        let healthEncoder = HealthJSON.makeEncoder()
        var writer = QuantitySampleJSONWriter()
        var blockedSince: Date?
        let batchSize = max(1, configuration.batchSize)
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
                try await signals.waitForRoom()
                continue
            }
            if blockedSince != nil {
                blockedSince = nil
                context.status.setDetail("outboxFull", nil)
                context.logger.info("outbox has room again: taking new records")
            }
            guard let batch = await inbox.next(maxCount: batchSize) else { break }
            let now = clock.now()
            var taken: [HealthRecord] = []
            var stored: [OutboxRecord] = []
            taken.reserveCapacity(batch.count)
            stored.reserveCapacity(batch.count)
            for record in batch {
                do {
                    let payload = try StoredPayload.encode(record, encoder: healthEncoder, writer: &writer)
                    stored.append(OutboxRecord(id: record.id, kind: record.kind, payload: payload, enqueuedAt: now))
                    taken.append(record)
                } catch {
                    // Cannot happen for validated samples (finite values); never drop silently.
                    context.logger.error("cannot encode record \(record.id): \(error); skipped", device: record.device?.displayName)
                    context.status.reportError("cannot encode record \(record.id): \(error)")
                    context.status.recordsDropped(1)
                }
            }
            var batches: [NewOutboxBatch] = []
            for first in stride(from: 0, to: stored.count, by: batchSize) {
                let range = first..<min(first + batchSize, stored.count)
                let records = Array(stored[range])
                // A full batch is final: encode it now. A smaller one waits to be merged.
                let body = records.count == batchSize ? encoder.body(for: records, samples: Array(taken[range])) : nil
                batches.append(NewOutboxBatch(records: records, body: body))
            }
            let result = try await outbox.append(batches, now: now, limits: limits)
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
}
