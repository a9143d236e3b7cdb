import FoundationEssentials
public import GatewayRuntime
import HealthModel
public import HealthStore

/// Keeps the gateway's store while it runs, in three loops beside ingest (child tasks of
/// ``run()``, so they end with the gateway's task tree):
///
/// - **Retention**, when the gateway starts and then every ``retentionInterval``: the tombstones
///   older than `tombstoneRetention` go (one indexed DELETE); with `sampleRetention`
///   (`store.retentionDays`), the raw samples, quantity series and heartbeat series that ended
///   before it are pruned in batches
///   (``HealthStore/prune(endingBefore:batchSize:keepWorkoutRecords:)``: one transaction each,
///   so ingest waits for one at most), those of finished workouts too unless
///   `keepWorkoutSamples`. Something outliving its retention by an hour costs nothing.
/// - **The background migration** of an upgraded store (``HealthStore/migrateBatch(seriesLimit:linkLimit:)``
///   until every step of ``HealthStore/migrationSteps()`` has finished): a bounded batch per
///   transaction and a yield between batches, so start-up and ingest never wait for more than
///   one batch. Its start, its progress (at each further tenth done, or after
///   ``progressInterval`` without one) and its end are logged with the steps' counts and the
///   time taken. A store with nothing to move (one created at this version) finishes its steps
///   in a batch each, logged at debug level only.
/// - **Idle quantity series**, every ``idleSeriesInterval``: the series nothing was added to for
///   their policy's gap are closed (``HealthStore/closeIdleSeries()``), so a device that went
///   away leaves no series open while nothing else is written.
///
/// A failure never stops the gateway: a failed purge or pass is logged and retried at the next
/// interval, a failed migration batch is logged and retried after ``migrationRetryDelay`` (the
/// store kept nothing of it and resumes where its steps say).
public struct StoreMaintenance: Sendable {
    public let store: HealthStore
    /// How long tombstones stay (`store.tombstoneRetentionDays`).
    public var tombstoneRetention: Duration
    /// How long raw samples and series stay (`store.retentionDays`), or nil: forever.
    public var sampleRetention: Duration?
    /// Whether retention spares what lies in a stored workout's time (`store.keepWorkoutSamples`).
    public var keepWorkoutSamples: Bool
    public let clock: any GatewayClock
    public let logger: Logger
    /// Heartbeat series a migration batch moves (``HealthStore/migrationSeriesBatch``).
    public var migrationSeriesBatch = HealthStore.migrationSeriesBatch
    /// Old workout links a migration batch deletes (``HealthStore/migrationLinkBatch``).
    public var migrationLinkBatch = HealthStore.migrationLinkBatch

    public init(
        store: HealthStore, tombstoneRetention: Duration, sampleRetention: Duration? = nil, keepWorkoutSamples: Bool = false,
        clock: any GatewayClock, logger: Logger
    ) {
        self.store = store
        self.tombstoneRetention = tombstoneRetention
        self.sampleRetention = sampleRetention
        self.keepWorkoutSamples = keepWorkoutSamples
        self.clock = clock
        self.logger = logger
    }

    /// How often the tombstones are purged and the samples pruned.
    public static let retentionInterval = Duration.seconds(3600)
    /// How often idle quantity series are looked for: the shortest gap of the built-in types'
    /// series policies, so a series is closed at most that long after its gap ran out.
    public static let idleSeriesInterval = QuantityType.builtIn.compactMap(\.seriesPolicy?.maximumGap).min()
        ?? QuantitySeriesPolicy.stream.maximumGap
    /// How long a failed migration batch waits before it is tried again.
    public static let migrationRetryDelay = Duration.seconds(60)
    /// The longest the migration's log stays silent while it runs, without a tenth more done.
    public static let progressInterval = Duration.seconds(30)

    /// Runs the three loops until cancelled; returns only by throwing `CancellationError`.
    public func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await migrate() }
            group.addTask { try await keepRetention() }
            group.addTask { try await closeIdleSeries() }
            try await group.waitForAll()
        }
    }

    // MARK: Retention

    /// Purges now and then every ``retentionInterval`` until cancelled.
    func keepRetention() async throws {
        while true {
            let now = clock.now()
            do {
                let purged = try await store.purgeTombstones(deletedBefore: now.addingTimeInterval(-tombstoneRetention.seconds))
                if purged > 0 { logger.info("purged \(String(count: purged, "tombstone")) older than the retention from \(store.path)") }
            } catch {
                logger.error("cannot purge the store's tombstones: \(error)")
            }
            if let sampleRetention {
                try await prune(endingBefore: now.addingTimeInterval(-sampleRetention.seconds))
            }
            try await clock.sleep(for: Self.retentionInterval)
        }
    }

    /// One pass of age-based pruning, logged once when it removed something.
    private func prune(endingBefore cutoff: Date) async throws {
        let started = clock.uptime()
        do {
            let pass = try await store.prune(endingBefore: cutoff, keepWorkoutRecords: keepWorkoutSamples)
            guard pass.samplesPruned + pass.quantitySeriesPruned + pass.seriesPruned > 0 else { return }
            logger.info(
                """
                pruned \(String(count: pass.samplesPruned, "sample")), \
                \(String(count: pass.quantitySeriesPruned, "quantity series", plural: "quantity series")) and \
                \(String(count: pass.seriesPruned, "heartbeat series", plural: "heartbeat series")) \
                ended before \(RFC3339.string(from: cutoff)) (store.retentionDays\(keepWorkoutSamples ? ", store.keepWorkoutSamples" : "")) \
                from \(store.path) in \(String(count: pass.batches, "batch", plural: "batches")), \(clock.uptime() - started)
                """)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.error("cannot prune the store's old samples (store.retentionDays): \(error)")
        }
    }

    // MARK: Background migration

    /// The background migration until every step has finished, a failed batch retried after
    /// ``migrationRetryDelay``.
    func migrate() async throws {
        var progress: StoreMigrationProgress?
        while true {
            do {
                try await migrate(&progress)
                return
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                logger.error(
                    "store migration: a batch failed, nothing of it was kept; retrying in \(Self.migrationRetryDelay): \(error)")
                try await clock.sleep(for: Self.migrationRetryDelay)
            }
        }
    }

    /// Runs batches until every step has finished; `progress` carries what was logged across a
    /// retry, so the start is announced once.
    private func migrate(_ progress: inout StoreMigrationProgress?) async throws {
        var steps = try await store.migrationSteps()
        guard steps.contains(where: { $0.finished == nil }) else { return }
        var current: StoreMigrationProgress
        if let resumed = progress {
            current = resumed
        } else {
            current = StoreMigrationProgress(steps: steps, started: clock.uptime())
            logger.log(current.level, "store migration: started in the background, ingest goes on; \(current.describe(steps))")
        }
        defer { progress = current }
        while steps.contains(where: { $0.finished == nil }) {
            try Task.checkCancellation()
            steps = try await store.migrateBatch(seriesLimit: migrationSeriesBatch, linkLimit: migrationLinkBatch)
            current.batches += 1
            if current.shouldReport(steps, at: clock.uptime(), every: Self.progressInterval) {
                logger.log(current.level, "store migration: \(current.percent(steps)) % done; \(current.describe(steps))")
            }
            // Other writes (ingest) queue on the writer between two batches.
            await Task.yield()
        }
        let seconds = (clock.uptime() - current.started).seconds
        logger.log(
            current.level,
            "store migration: finished in \(String(cFormat: "%.1f", seconds)) s, "
                + "\(String(count: current.batches, "batch", plural: "batches")); \(current.describe(steps))")
    }

    // MARK: Idle quantity series

    /// Closes the idle quantity series every ``idleSeriesInterval`` until cancelled.
    func closeIdleSeries() async throws {
        while true {
            try await clock.sleep(for: Self.idleSeriesInterval)
            do {
                let closed = try await store.closeIdleSeries()
                if closed > 0 { logger.debug("closed \(String(count: closed, "idle quantity series", plural: "idle quantity series"))") }
            } catch {
                logger.error("cannot close the idle quantity series in \(store.path): \(error)")
            }
        }
    }
}

/// What the background migration's log has said: when it began, how many batches ran, and the
/// last tenth and time it reported. A value, so its rules are tested without a store.
struct StoreMigrationProgress: Sendable, Hashable {
    /// When the migration began, on the gateway's monotonic clock.
    var started: Duration
    /// Batches run so far.
    var batches = 0
    /// The tenths done at the last report.
    var reportedTenths: Int
    /// When the last report (or the start) was logged.
    var reportedAt: Duration
    /// Whether the steps had nothing to move when it began (a store created at this version).
    var quiet: Bool

    /// The level of its lines: debug for a store that had nothing to move.
    var level: LogLevel { quiet ? .debug : .info }

    init(steps: [StoreMigrationStep], started: Duration) {
        self.started = started
        reportedAt = started
        reportedTenths = Self.tenths(steps)
        quiet = steps.allSatisfy { $0.finished != nil || $0.total == 0 }
    }

    /// Whether a report is due after a batch: a further tenth done, or `interval` since the
    /// last one; the migration's end is reported apart.
    mutating func shouldReport(_ steps: [StoreMigrationStep], at now: Duration, every interval: Duration) -> Bool {
        guard steps.contains(where: { $0.finished == nil }) else { return false }
        let tenths = Self.tenths(steps)
        guard tenths > reportedTenths || now - reportedAt >= interval else { return false }
        reportedTenths = tenths
        reportedAt = now
        return true
    }

    /// The whole percent done over every step; at most 99 until every step has finished (the
    /// last batch of a step drops its emptied table).
    func percent(_ steps: [StoreMigrationStep]) -> Int {
        Self.share(steps, of: 100)
    }

    /// `heartbeats 120/1200, workout_samples 0/45000 (finished)`.
    func describe(_ steps: [StoreMigrationStep]) -> String {
        steps.map { "\($0.name) \($0.handled)/\($0.total)" + ($0.finished != nil ? " (finished)" : "") }
            .joined(separator: ", ")
    }

    /// The share of every step's rows handled; 1 when there are none.
    static func fraction(_ steps: [StoreMigrationStep]) -> Double {
        let total = steps.reduce(0) { $0 + $1.total }
        guard total > 0 else { return steps.allSatisfy { $0.finished != nil } ? 1 : 0 }
        return Double(steps.reduce(0) { $0 + $1.handled }) / Double(total)
    }

    /// The whole tenths done; at most 9 until every step has finished.
    static func tenths(_ steps: [StoreMigrationStep]) -> Int {
        share(steps, of: 10)
    }

    /// The share done in `parts`, rounded down, short of the whole while a step runs.
    static func share(_ steps: [StoreMigrationStep], of parts: Int) -> Int {
        let share = Int((fraction(steps) * Double(parts)).rounded(.down))
        return steps.allSatisfy { $0.finished != nil } ? share : min(share, parts - 1)
    }
}

extension StoreMigrationStep {
    /// The rows the step handled as the log, `status` and `/metrics` show them: its total once
    /// it finished, else at most its total (the heartbeat step also walks series written after
    /// the upgrade began).
    public var handled: Int { finished != nil ? total : min(done, total) }
}
