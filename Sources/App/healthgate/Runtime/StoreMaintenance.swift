import FoundationEssentials
import HealthStore
import GatewayRuntime

/// Keeps the store's change log within its retention: deletes the tombstones older than
/// `store.tombstoneRetentionDays` when the gateway starts and then once an hour (purging is one
/// indexed DELETE, and a tombstone outliving its retention by an hour costs nothing).
///
/// A failed purge is logged and retried at the next hour; it never stops the gateway.
struct StoreMaintenance {
    let store: HealthStore
    let retention: Duration
    let clock: any GatewayClock
    let logger: Logger
    /// How often the tombstones are purged.
    static let interval = Duration.seconds(3600)

    /// Purges now and then every ``interval`` until cancelled.
    func run() async throws {
        while true {
            let cutoff = clock.now().addingTimeInterval(-Double(retention.components.seconds))
            do {
                let purged = try await store.purgeTombstones(deletedBefore: cutoff)
                if purged > 0 { logger.info("purged \(String(count: purged, "tombstone")) older than the retention from \(store.path)") }
            } catch {
                logger.error("cannot purge the store's tombstones: \(error)")
            }
            try await clock.sleep(for: Self.interval)
        }
    }
}
