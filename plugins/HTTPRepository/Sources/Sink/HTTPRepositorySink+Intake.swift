import Foundation
import HealthModel
import RemoteOutbox
import SampleBus

extension HTTPRepositorySink {
    /// Takes batches from the inbox into the outbox until the inbox ends, then tells the
    /// delivery (``DeliverySignals/finishIntake()``), which also ends a backoff under way.
    ///
    /// One inbox batch (up to ``intakeBatches`` × `batchSize` records) is one outbox
    /// transaction: its records, cut into batches of at most `batchSize`; a full one is encoded
    /// here, once, and stored sealed, a smaller one is stored unsealed for the delivery to merge
    /// with the next ones. The batches are encoded and compressed concurrently, one child task
    /// each, and stored in order. The bus is acknowledged after the commit, so a crash loses
    /// nothing the bus was told was taken.
    func intake(inbox: SinkInbox, context: SinkContext, signals: DeliverySignals) async throws {
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
            guard let batch = await inbox.next(maxCount: batchSize * Self.intakeBatches) else { break }
            let now = clock.now()
            let batches = await encode(batch, batchSize: batchSize, now: now, context: context)
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

    /// How many outbox batches one inbox batch may fill: each is encoded on its own child task,
    /// so the intake uses more than one core (the intake's encoding and compression are the HTTP
    /// benchmark's critical path; Benchmarks/RESULTS.md).
    static let intakeBatches = 4

    /// `records` as outbox batches of at most `batchSize`, in order; each full one with its body.
    /// A record that cannot be encoded is logged, counted as dropped and left out.
    private func encode(_ records: [HealthRecord], batchSize: Int, now: Date, context: SinkContext) async -> [NewOutboxBatch] {
        let chunks = stride(from: 0, to: records.count, by: batchSize).map {
            Array(records[$0..<min($0 + batchSize, records.count)])
        }
        let encoder = encoder
        let parts = await withTaskGroup(of: (Int, NewOutboxBatch?, [(SampleID, String, String?)]).self) { group in
            for (index, chunk) in chunks.enumerated() {
                group.addTask {
                    let healthEncoder = HealthJSON.makeEncoder()
                    var writer = QuantitySampleJSONWriter()
                    var taken: [HealthRecord] = []
                    var stored: [OutboxRecord] = []
                    var failures: [(SampleID, String, String?)] = []
                    taken.reserveCapacity(chunk.count)
                    stored.reserveCapacity(chunk.count)
                    for record in chunk {
                        do {
                            let payload = try StoredPayload.encode(record, encoder: healthEncoder, writer: &writer)
                            stored.append(OutboxRecord(id: record.id, kind: record.kind, payload: payload, enqueuedAt: now))
                            taken.append(record)
                        } catch {
                            failures.append((record.id, "\(error)", record.device?.displayName))
                        }
                    }
                    guard !stored.isEmpty else { return (index, nil, failures) }
                    // A full batch is final: encode it now. A smaller one waits to be merged.
                    let body = stored.count == batchSize ? encoder.body(for: stored, samples: taken) : nil
                    return (index, NewOutboxBatch(records: stored, body: body), failures)
                }
            }
            var parts: [(Int, NewOutboxBatch?, [(SampleID, String, String?)])] = []
            for await part in group { parts.append(part) }
            return parts.sorted { $0.0 < $1.0 }
        }
        var batches: [NewOutboxBatch] = []
        for (_, batch, failures) in parts {
            for (id, error, device) in failures {
                // Cannot happen for validated samples (finite values); never drop silently.
                context.logger.error("cannot encode record \(id): \(error); skipped", device: device)
                context.status.reportError("cannot encode record \(id): \(error)")
                context.status.recordsDropped(1)
            }
            if let batch { batches.append(batch) }
        }
        return batches
    }
}
