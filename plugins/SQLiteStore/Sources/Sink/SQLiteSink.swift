public import FoundationEssentials
public import HealthModel
public import HealthStore
import GatewayRuntime
public import SampleBus
import AsyncPrimitives
import Synchronization

/// The default sink: commits every record (quantity samples, correlations, heartbeat series,
/// workouts) and every source checkpoint into the gateway's store (``HealthStore/HealthStore``),
/// which the executable opened once and hands to the sink in its environment.
///
/// Batching: the sink takes up to `batchSize` records from its inbox; when it got fewer, it waits
/// one `batchWindowSeconds` window on the gateway clock for more, then commits everything it
/// holds in ONE transaction and acknowledges. So a record waits at most one window (plus the
/// commit) and a transaction holds at most `batchSize` records.
///
/// Failures: a commit that fails (a full disk, an I/O error) is logged and thrown; the
/// supervisor restarts the sink with backoff. Records taken from the inbox but not committed are
/// kept by the sink and committed first on the next run, and the inbox redelivers its
/// unacknowledged batch; commits are idempotent, so nothing is lost and nothing is stored twice.
///
/// Source checkpoints: each batch's checkpoints are written in the same transaction as its
/// records, so a source that resumes from a committed checkpoint finds exactly the records
/// published before it committed too (README, "Durability"); the store reads them back.
public struct SQLiteSink: SampleSink, ConfigurablePlugin {
    /// `sqlite`.
    public static let kind = "sqlite"
    /// One line for `healthgate plugins`.
    public static let summary =
        "Commits samples, heartbeat series and workouts into the gateway's store (SQLite, WAL); see `healthgate query`."

    /// The store the sink commits into.
    public let store: HealthStore
    /// The most records per transaction.
    public let batchSize: Int
    /// How long a short batch waits for more records.
    public let batchWindow: Duration
    private let state = RetainedState()

    /// Called after every committed transaction with the records it held and the gateway clock's
    /// date right after the commit returned. An observation hook for benchmarks and embedding
    /// programs (the latency benchmark in Benchmarks/ uses it); it cannot be set from a
    /// configuration file. nil (the default) costs one nil check per transaction.
    ///
    /// Contract: it runs on the sink's task, before the batch is acknowledged, so it must be quick
    /// and must not block; the records are the ones committed (duplicates ignored by the store
    /// included).
    public var onCommit: (@Sendable (_ records: [HealthRecord], _ committedAt: Date) -> Void)?

    /// Builds the sink from validated settings (see ``Configuration/validated(in:)``) and the
    /// environment's store.
    /// - Throws: ``PluginConfigurationError`` when the environment has no store (a program that
    ///   embeds the gateway must open one and pass it).
    public init(settings: Settings, environment: PluginEnvironment) throws {
        guard let store = environment.store else {
            throw PluginConfigurationError(keyPath: "(sink)", reason: "the gateway opened no store for this sink")
        }
        self.store = store
        self.batchSize = settings.batchSize
        self.batchWindow = settings.batchWindow
    }

    /// Records taken from the inbox but not yet committed (kept across a failed run).
    public var uncommittedCount: Int { state.withLock { $0.pending.records.count } }

    /// The store, which reads back the checkpoints this sink committed.
    public var checkpointReader: (any SourceCheckpointReader)? { store }

    /// Commits batches from `inbox` until it is finished and drained; see the type's
    /// documentation for batching and failures. Throws ``HealthStore/StoreError`` when a commit
    /// fails, and `CancellationError` on forced shutdown (uncommitted records are kept for the
    /// next run).
    public func run(inbox: SinkInbox, context: SinkContext) async throws {
        context.logger.info("committing records into \(store.path)")
        // A forced stop must not wait for a commit stuck on another process's lock.
        let interruption = context.stopRequest.onForcedStop { [store] in store.interruptWriter() }
        defer { interruption.cancel() }
        var pending = state.withLock { $0.pending }
        // When the last commit began. Records already queued when a commit ends have waited
        // since at most then, so their window counts from there: otherwise a record could wait
        // commit + window + commit.
        // Batch windows are measured on the monotonic clock: a step of the wall clock back would
        // otherwise hold a batch uncommitted for as long as the step.
        var lastCommitStart: Duration?
        var windowStart = context.clock.uptime()
        // The batch committed last, freed while the next one commits (see below).
        var committed: SinkBatch?
        while true {
            if pending.records.isEmpty, pending.checkpoints.isEmpty {
                let queuedDuringCommit = inbox.depth > 0
                guard let batch = await inbox.nextBatch(maxCount: batchSize) else { break }
                pending = batch
                state.withLock { $0.pending = pending }
                windowStart = queuedDuringCommit ? (lastCommitStart ?? context.clock.uptime()) : context.clock.uptime()
            }
            if pending.records.count < batchSize {
                try await waitForMore(
                    batchSize - pending.records.count, since: windowStart, inbox: inbox, clock: context.clock)
            }
            if pending.records.count < batchSize, inbox.depth > 0,
                let more = await inbox.nextBatch(maxCount: batchSize - pending.records.count)
            {
                // Taking more acknowledges the first part in the inbox; the sink holds it in
                // `state` until the commit, so a failure cannot lose it.
                pending.records += more.records
                pending.checkpoints += more.checkpoints
                state.withLock { $0.pending = pending }
            }
            let summary: WriteSummary
            lastCommitStart = context.clock.uptime()
            do {
                let batch = pending
                async let written = store.write(batch.records, checkpoints: batch.checkpoints)
                // Freeing the records of the batch committed before is work of its own: done here,
                // on this task, while the store's writer commits this batch on its queue.
                committed = nil
                summary = try await written
            } catch {
                let checkpoints = pending.checkpoints.isEmpty ? "" : " and \(String(count: pending.checkpoints.count, "checkpoint"))"
                context.logger.error(
                    "commit of \(String(count: pending.records.count, "record"))\(checkpoints) failed, will retry after restart: \(error)")
                throw error
            }
            if let onCommit, !pending.records.isEmpty { onCommit(pending.records, context.clock.now()) }
            let (transactions, ignored, refused) = state.withLock { state in
                state.pending = SinkBatch(records: [])
                state.transactions += 1
                state.ignored += summary.ignored
                state.refused += summary.refused
                return (state.transactions, state.ignored, state.refused)
            }
            inbox.acknowledge()
            committed = pending
            pending = SinkBatch(records: [])
            context.status.recordsHandled(summary.inserted + summary.replaced, lastDate: summary.lastRecordDate)
            context.status.setDetail("transactions", String(transactions))
            context.status.setDetail("duplicatesIgnored", String(ignored))
            if summary.refused > 0 {
                // Two readings their source gave one identity: the first stored stays, and says so.
                let more = summary.refused > summary.refusedIdentifiers.count ? ", …" : ""
                context.logger.warning(
                    "refused \(String(count: summary.refused, "reading")) whose sync identifier and version are stored already with "
                        + "another type or value; the stored one stays: \(summary.refusedIdentifiers.joined(separator: ", "))\(more)")
                context.status.setDetail("readingsRefused", String(refused))
            }
            context.status.setDetail("latestAnchor", String(summary.latestAnchor))
            context.status.clearError()
        }
        // The bus finished: no reading follows, so the series being filled are closed now, while
        // the remote sinks still follow the store and send their final versions in this run.
        try await store.closeSeries()
        context.logger.info("inbox drained")
    }

    /// Waits until the inbox holds `needed` records or one batch window has passed since
    /// `start` (at once when it has passed already), whichever comes first.
    ///
    /// No polling: the inbox wakes the sink when the batch is full, and one sleep on the gateway
    /// clock ends the window. A batch that fills early is committed early; a window ends on time.
    private func waitForMore(_ needed: Int, since start: Duration, inbox: SinkInbox, clock: any GatewayClock) async throws {
        let remaining = batchWindow - (clock.uptime() - start)
        guard remaining > .zero, inbox.depth < needed else { return }
        _ = try await race(sleep: { try await clock.sleep(for: remaining) }) {
            await inbox.waitForDepth(atLeast: needed)
        }
        // A forced shutdown cancels this task, and then either child may finish first: throw
        // CancellationError either way, so that the batch is kept for the next run, as documented.
        try Task.checkCancellation()
    }

    /// What survives a failed run of the same sink instance.
    private struct Retained {
        var pending = SinkBatch(records: [])
        var transactions = 0
        var ignored = 0
        var refused = 0
    }

    private final class RetainedState: Sendable {
        private let mutex = Mutex(Retained())
        func withLock<T>(_ body: (inout Retained) -> T) -> T { mutex.withLock { body(&$0) } }
    }
}
