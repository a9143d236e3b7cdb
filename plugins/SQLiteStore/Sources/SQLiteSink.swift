public import Foundation
public import HealthModel
public import SampleBus
import Dispatch
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
    public var uncommittedCount: Int { state.withLock { $0.pending.count } }

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
        var pending = state.withLock { $0.pending }
        // When the last commit began. Records already queued when a commit ends have waited
        // since at most then, so their window counts from there: otherwise a record could wait
        // commit + window + commit (measured in Benchmarks/RESULTS.md, "End-to-end latency").
        var lastCommitStart: Date?
        var windowStart = context.clock.now()
        while true {
            if pending.isEmpty {
                let queuedDuringCommit = inbox.depth > 0
                guard let batch = await inbox.next(maxCount: batchSize) else { break }
                pending = batch
                state.withLock { $0.pending = pending }
                windowStart = queuedDuringCommit ? (lastCommitStart ?? context.clock.now()) : context.clock.now()
            }
            if pending.count < batchSize {
                try await waitForMore(batchSize - pending.count, since: windowStart, inbox: inbox, clock: context.clock)
            }
            if pending.count < batchSize, inbox.depth > 0,
                let more = await inbox.next(maxCount: batchSize - pending.count)
            {
                // Taking more acknowledges the first part in the inbox; the sink holds it in
                // `state` until the commit, so a failure cannot lose it.
                pending += more
                state.withLock { $0.pending = pending }
            }
            let summary: WriteSummary
            lastCommitStart = context.clock.now()
            do {
                summary = try await writer.write(pending)
            } catch {
                context.logger.error("commit of \(pending.count) record(s) failed, will retry after restart: \(error)")
                throw error
            }
            if let onCommit { onCommit(pending, context.clock.now()) }
            state.withLock { state in
                state.pending = []
                state.transactions += 1
                state.ignored += summary.ignored
            }
            inbox.acknowledge()
            pending = []
            context.status.recordsHandled(summary.inserted + summary.replaced, lastDate: summary.lastRecordDate)
            let (transactions, ignored) = state.withLock { ($0.transactions, $0.ignored) }
            context.status.setDetail("transactions", String(transactions))
            context.status.setDetail("duplicatesIgnored", String(ignored))
            context.status.clearError()
        }
        await writer.close()
        context.logger.info("inbox drained; store closed")
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
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await clock.sleep(for: remaining) }
            group.addTask { await inbox.waitForDepth(atLeast: needed) }
            // The first to finish ends the wait; cancelling the other makes it return at once.
            try await group.next()
            group.cancelAll()
        }
        // A forced shutdown cancels this task, and then either child may finish first: throw
        // CancellationError either way, so that the batch is kept for the next run, as documented.
        try Task.checkCancellation()
    }

    /// What survives a failed run of the same sink instance.
    private struct Retained {
        var pending: [HealthRecord] = []
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

/// A ``SQLiteSampleWriter`` owned by a serial DispatchQueue, so that `sqlite3_step` never runs on
/// the cooperative thread pool.
///
/// `@unchecked Sendable`: the writer is only touched by blocks on `queue`, one at a time (the
/// same argument as ``SQLite/SQLiteDatabase``).
final class SerializedWriter: @unchecked Sendable {
    private let queue: DispatchQueue
    // nil once closed; only read and written on `queue`.
    private var writer: SQLiteSampleWriter?
    private let path: String

    private init(queue: DispatchQueue, writer: SQLiteSampleWriter) {
        self.queue = queue
        self.writer = writer
        self.path = writer.path
    }

    static func open(path: String, maximumPageCount: Int?) async throws(StoreError) -> SerializedWriter {
        let queue = DispatchQueue(label: "healthgate.sqlite-sink")
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<SerializedWriter, StoreError>, Never>) in
            queue.async {
                continuation.resume(returning: Result { () throws(StoreError) -> SerializedWriter in
                    SerializedWriter(
                        queue: queue, writer: try SQLiteSampleWriter(path: path, maximumPageCount: maximumPageCount))
                })
            }
        }
        return try result.get()
    }

    func write(_ records: [HealthRecord]) async throws(StoreError) -> WriteSummary {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<WriteSummary, StoreError>, Never>) in
            queue.async {
                continuation.resume(returning: Result { () throws(StoreError) -> WriteSummary in
                    guard let writer = self.writer else {
                        throw StoreError(.sqlite, path: self.path, message: "the sink's connection is closed")
                    }
                    return try writer.write(records)
                })
            }
        }
        return try result.get()
    }

    /// Closes the connection on the queue (SQLite checkpoints the WAL when the last connection
    /// closes) and returns when it is closed.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.writer = nil
                continuation.resume()
            }
        }
    }
}
