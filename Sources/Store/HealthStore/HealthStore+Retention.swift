public import FoundationEssentials

extension HealthStore {
    /// One batch of age-based pruning (`store.retentionDays`): looks at up to `batchSize`
    /// quantity samples, or a proportionate number of quantity or heartbeat series, that ended
    /// before `cutoff`, after `progress`'s position, and deletes, in ONE transaction on the
    /// writer's queue and without tombstones, those that no running workout still collects, no
    /// correlation contains, and every follower (remote sink) has passed; with
    /// `keepWorkoutRecords`, also those that lie within a stored workout's time.
    ///
    /// The writer is held for this one batch only: a write waiting on the queue runs between
    /// two batches. Workouts, their statistics, events and curves are never pruned: a finished
    /// workout keeps its totals, zones, laps and chart whatever goes.
    /// - Returns: `progress` advanced; pass it to the next batch until ``RetentionProgress/isFinished``.
    /// - Throws: ``StoreError`` (`.readOnly`, or the SQLite failure); nothing of the batch is
    ///   deleted then, and the pass can resume from `progress`.
    public func pruneBatch(
        endingBefore cutoff: Date, after progress: RetentionProgress = .start, batchSize: Int = HealthStore.retentionBatchSize,
        keepWorkoutRecords: Bool = false
    ) async throws(StoreError) -> RetentionProgress {
        try await requireWriter().perform { writer throws(StoreError) in
            try writer.pruneBatch(endingBefore: cutoff, after: progress, batchSize: batchSize, keepWorkoutRecords: keepWorkoutRecords)
        }
    }

    /// A whole pass of age-based pruning: ``pruneBatch(endingBefore:after:batchSize:)`` until
    /// it is finished, yielding between batches so that other writes interleave.
    ///
    /// Cancellation stops the pass between batches (what went stays gone) with `CancellationError`.
    /// - Returns: what the pass pruned.
    public func prune(
        endingBefore cutoff: Date, batchSize: Int = HealthStore.retentionBatchSize, keepWorkoutRecords: Bool = false
    ) async throws -> RetentionProgress {
        var progress = RetentionProgress.start
        while !progress.isFinished {
            try Task.checkCancellation()
            progress = try await pruneBatch(
                endingBefore: cutoff, after: progress, batchSize: batchSize, keepWorkoutRecords: keepWorkoutRecords)
            await Task.yield()
        }
        return progress
    }

    /// The candidates one pruning batch looks at by default: an ingest batch waits for at most
    /// one such transaction (see Benchmarks/RESULTS.md, `class-day`, for its measured time).
    public static let retentionBatchSize = 1000
}
