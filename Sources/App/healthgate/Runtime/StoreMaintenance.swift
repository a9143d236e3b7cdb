import FoundationEssentials
import HealthStore
import GatewayRuntime

/// Keeps the store within its retention, when the gateway starts and then once an hour:
/// deletes the tombstones older than `store.tombstoneRetentionDays` (one indexed DELETE), and,
/// with `store.retentionDays`, prunes the raw samples and heartbeat series older than that in
/// batches (``HealthStore/prune(endingBefore:batchSize:)``: one transaction per batch, so
/// ingest is never held for more than one). Something outliving its retention by an hour costs
/// nothing.
///
/// A failed purge or pass is logged and retried at the next hour; it never stops the gateway.
struct StoreMaintenance {
    let store: HealthStore
    let retention: Duration
    /// `store.retentionDays`, or nil: samples are kept forever.
    var sampleRetention: Duration? = nil
    let clock: any GatewayClock
    let logger: Logger
    /// How often the tombstones are purged and the samples pruned.
    static let interval = Duration.seconds(3600)

    /// Purges now and then every ``interval`` until cancelled.
    func run() async throws {
        while true {
            let now = clock.now()
            let cutoff = now.addingTimeInterval(-Double(retention.components.seconds))
            do {
                let purged = try await store.purgeTombstones(deletedBefore: cutoff)
                if purged > 0 { logger.info("purged \(String(count: purged, "tombstone")) older than the retention from \(store.path)") }
            } catch {
                logger.error("cannot purge the store's tombstones: \(error)")
            }
            if let sampleRetention {
                try await prune(endingBefore: now.addingTimeInterval(-Double(sampleRetention.components.seconds)))
            }
            try await clock.sleep(for: Self.interval)
        }
    }

    /// One pass of age-based pruning, logged once when it removed something.
    private func prune(endingBefore cutoff: Date) async throws {
        let started = ContinuousClock.now
        do {
            let pass = try await store.prune(endingBefore: cutoff)
            guard pass.samplesPruned + pass.seriesPruned > 0 else { return }
            logger.info(
                """
                pruned \(String(count: pass.samplesPruned, "sample")) and \(String(count: pass.seriesPruned, "heartbeat series", plural: "heartbeat series")) \
                ended before \(cutoff) (store.retentionDays) from \(store.path) in \(String(count: pass.batches, "batch", plural: "batches")), \
                \(ContinuousClock.now - started)
                """)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.error("cannot prune the store's old samples (store.retentionDays): \(error)")
        }
    }
}
