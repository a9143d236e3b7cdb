import AsyncPrimitives
public import Foundation
public import HealthModel
public import SampleBus
import Dispatch
import SQLite
import Synchronization

/// The default sink: stores every record (quantity samples, heartbeat series, workouts) in a
/// SQLite database in WAL mode, queryable with ``SQLiteSampleStore``, `healthgate query` and the
/// `sqlite3` shell.
///
/// Batching: the sink takes up to `batchSize` records from its inbox; when it got fewer, it waits
/// one `batchWindowSeconds` window on the gateway clock for more, then commits everything it
/// holds in ONE transaction and acknowledges. So a record waits at most one window (plus the
/// commit) and a transaction holds at most `batchSize` records.
///
/// Failures: an error while opening or committing (a full disk, an I/O error) is logged and
/// thrown; the supervisor restarts the sink with backoff. Records taken from the inbox but not
/// committed are kept by the sink and committed first on the next run, and the inbox redelivers
/// its unacknowledged batch; commits are idempotent (uuid primary keys), so nothing is lost and
/// nothing is stored twice.
///
/// Source checkpoints: the sink stores them (``checkpointReader``). Each batch's checkpoints are
/// written in the same transaction as its records, so a source that resumes from a committed
/// checkpoint finds exactly the records published before it committed too (README, "Durability").
public struct SQLiteSink: SampleSink, ConfigurablePlugin {
    /// `sqlite`.
    public static let kind = "sqlite"
    /// One line for `healthgate plugins`.
    public static let summary =
        "Stores samples, heartbeat series and workouts in a SQLite database (WAL); see `healthgate query`."

    /// The database file.
    public let path: String
    /// The most records per transaction.
    public let batchSize: Int
    /// How long a short batch waits for more records.
    public let batchWindow: Duration
    /// How long tombstones of deleted objects stay in the change log. The sink purges older ones
    /// when it opens the store and then at most once per ``purgeInterval`` after a commit.
    public let tombstoneRetention: Duration
    /// One hour: purging is one indexed DELETE, and a tombstone outliving its retention by an
    /// hour costs nothing.
    static let purgeInterval: TimeInterval = 3600
    private let state: RetainedState

    /// Called after every committed transaction with the records it held and the gateway clock's
    /// date right after the commit returned. An observation hook for benchmarks and embedding
    /// programs (the latency benchmark in Benchmarks/ uses it); it cannot be set from a
    /// configuration file. nil (the default) costs one nil check per transaction.
    ///
    /// Contract: it runs on the sink's task, before the batch is acknowledged, so it must be quick
    /// and must not block; the records are the ones committed (duplicates ignored by the store
    /// included).
    public var onCommit: (@Sendable (_ records: [HealthRecord], _ committedAt: Date) -> Void)?

    /// Builds the sink from validated settings (see ``Configuration/validated(in:)``). Opens
    /// nothing: the database is opened when the sink runs.
    public init(settings: Settings, environment: PluginEnvironment) {
        self.path = settings.path
        self.batchSize = settings.batchSize
        self.batchWindow = settings.batchWindow
        self.tombstoneRetention = settings.tombstoneRetention
        self.state = RetainedState(maximumPageCount: settings.maximumPageCount)
    }

    /// Validates `configuration` and builds the sink from it.
    /// - Throws: ``PluginConfigurationError`` naming the key that is wrong.
    public init(configuration: Configuration, environment: PluginEnvironment) throws {
        self.init(settings: try configuration.validated(in: environment), environment: environment)
    }

    /// Changes the size limit, in database pages, applied when the sink next opens its database
    /// (at its next start or restart). nil removes the limit.
    public func setMaximumPageCount(_ pages: Int?) {
        state.withLock { $0.maximumPageCount = pages }
    }

    /// Records taken from the inbox but not yet committed (kept across a failed run).
    public var uncommittedCount: Int { state.withLock { $0.pending.records.count } }

    /// Reads back the checkpoints this sink committed.
    public var checkpointReader: (any SourceCheckpointReader)? { SQLiteCheckpointReader(path: path) }

    /// Opens the store, then commits batches from `inbox` until it is finished and drained;
    /// see the type's documentation for batching and failures. Throws ``StoreError`` when the
    /// database cannot be opened or a commit fails, and `CancellationError` on forced shutdown
    /// (uncommitted records are kept for the next run).
    public func run(inbox: SinkInbox, context: SinkContext) async throws {
        let writer: SerializedWriter
        do {
            writer = try await SerializedWriter.open(path: path, maximumPageCount: state.withLock { $0.maximumPageCount })
        } catch {
            context.logger.error("cannot open the store: \(error)")
            throw error
        }
        context.logger.info("storing records in \(path)")
        var lastPurge = try await purgeTombstones(writer, context: context)
        // A forced stop must not wait for a commit stuck on another process's lock.
        let interruption = context.stopRequest.onForcedStop { writer.interrupt() }
        defer { interruption.cancel() }
        var pending = state.withLock { $0.pending }
        // When the last commit began. Records already queued when a commit ends have waited
        // since at most then, so their window counts from there: otherwise a record could wait
        // commit + window + commit (measured in Benchmarks/RESULTS.md, "End-to-end latency").
        var lastCommitStart: Date?
        var windowStart = context.clock.now()
        while true {
            if pending.records.isEmpty, pending.checkpoints.isEmpty {
                let queuedDuringCommit = inbox.depth > 0
                guard let batch = await inbox.nextBatch(maxCount: batchSize) else { break }
                pending = batch
                state.withLock { $0.pending = pending }
                windowStart = queuedDuringCommit ? (lastCommitStart ?? context.clock.now()) : context.clock.now()
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
            lastCommitStart = context.clock.now()
            do {
                summary = try await writer.write(pending)
            } catch {
                let checkpoints = pending.checkpoints.isEmpty ? "" : " and \(pending.checkpoints.count) checkpoint(s)"
                context.logger.error(
                    "commit of \(pending.records.count) record(s)\(checkpoints) failed, will retry after restart: \(error)")
                throw error
            }
            if let onCommit, !pending.records.isEmpty { onCommit(pending.records, context.clock.now()) }
            state.withLock { state in
                state.pending = SinkBatch(records: [])
                state.transactions += 1
                state.ignored += summary.ignored
            }
            inbox.acknowledge()
            pending = SinkBatch(records: [])
            if context.clock.now().timeIntervalSince(lastPurge) >= Self.purgeInterval {
                lastPurge = try await purgeTombstones(writer, context: context)
            }
            context.status.recordsHandled(summary.inserted + summary.replaced, lastDate: summary.lastRecordDate)
            let (transactions, ignored) = state.withLock { ($0.transactions, $0.ignored) }
            context.status.setDetail("transactions", String(transactions))
            context.status.setDetail("duplicatesIgnored", String(ignored))
            context.status.clearError()
        }
        await writer.close()
        context.logger.info("inbox drained; store closed")
    }

    /// Deletes the tombstones older than the retention; returns the clock's date of the purge.
    private func purgeTombstones(_ writer: SerializedWriter, context: SinkContext) async throws -> Date {
        let now = context.clock.now()
        let retention = Double(tombstoneRetention.components.seconds)
        do {
            let purged = try await writer.purgeTombstones(deletedBefore: now.addingTimeInterval(-retention))
            if purged > 0 { context.logger.info("purged \(purged) tombstone(s) older than the retention") }
        } catch {
            context.logger.error("cannot purge tombstones: \(error)")
            throw error
        }
        return now
    }

    /// Waits until the inbox holds `needed` records or one batch window has passed since
    /// `start` (at once when it has passed already), whichever comes first.
    ///
    /// No polling: the inbox wakes the sink when the batch is full, and one sleep on the gateway
    /// clock ends the window. A batch that fills early is committed early; a window ends on time.
    private func waitForMore(_ needed: Int, since start: Date, inbox: SinkInbox, clock: any GatewayClock) async throws {
        // Rounded to the microsecond, so that a manual clock's dates compare exactly; a clock
        // that jumped past the window ends it at once.
        let elapsed = Duration.microseconds(Int64((clock.now().timeIntervalSince(start) * 1_000_000).rounded()))
        let remaining = batchWindow - elapsed
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
        var maximumPageCount: Int?
        var transactions = 0
        var ignored = 0
    }

    private final class RetainedState: Sendable {
        private let mutex: Mutex<Retained>
        init(maximumPageCount: Int?) { mutex = Mutex(Retained(maximumPageCount: maximumPageCount)) }
        func withLock<T>(_ body: (inout Retained) -> T) -> T { mutex.withLock { body(&$0) } }
    }
}

/// A ``SQLiteSampleWriter`` confined to one serial queue: an actor whose executor is that queue,
/// so `sqlite3_step` never runs on the cooperative thread pool and the compiler checks that
/// nothing else touches the writer.
actor SerializedWriter {
    private let executor = QueueExecutor(label: "healthgate.sqlite-sink")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    // nil until opened and once closed.
    private var writer: SQLiteSampleWriter?
    private let path: String
    /// Reachable from any thread, for a forced stop; inert once the connection is closed.
    private let interruptHandle = Mutex<SQLiteInterruptHandle?>(nil)

    private init(path: String) {
        self.path = path
    }

    /// Interrupts the write in progress, from any thread; inert once the connection is closed.
    nonisolated func interrupt() {
        interruptHandle.withLock { $0 }?.interrupt()
    }

    /// Opens the writer on its queue (opening creates and migrates the file).
    static func open(path: String, maximumPageCount: Int?) async throws(StoreError) -> SerializedWriter {
        let serialized = SerializedWriter(path: path)
        try await serialized.connect(maximumPageCount: maximumPageCount)
        return serialized
    }

    private func connect(maximumPageCount: Int?) throws(StoreError) {
        let opened = try SQLiteSampleWriter(path: path, maximumPageCount: maximumPageCount)
        interruptHandle.withLock { $0 = opened.interruptHandle }
        writer = opened
    }

    func write(_ batch: SinkBatch) throws(StoreError) -> WriteSummary {
        guard let writer else {
            throw StoreError(.sqlite, path: path, message: "the sink's connection is closed")
        }
        return try writer.write(batch.records, checkpoints: batch.checkpoints)
    }

    func purgeTombstones(deletedBefore date: Date) throws(StoreError) -> Int {
        guard let writer else {
            throw StoreError(.sqlite, path: path, message: "the sink's connection is closed")
        }
        return try writer.purgeTombstones(deletedBefore: date)
    }

    /// Closes the connection (SQLite checkpoints the WAL when the last connection closes).
    func close() {
        writer = nil
    }
}
