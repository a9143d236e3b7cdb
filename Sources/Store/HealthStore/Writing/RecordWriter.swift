import FoundationEssentials
import HealthModel
import SQLite

/// The store's writer: one read-write connection and what it remembers between transactions.
///
/// Not thread-safe: ``StoreWriter`` confines it to one serial queue. It opens the file in WAL
/// mode with the durability of ``StoreDurability`` (every commit on disk before it returns or
/// any reader sees it), refuses a file that is not a healthgate store, and migrates the schema
/// to ``StoreSchema/version``.
///
/// Rules (HealthKit's): a record stored already is a no-op (for a quantity sample: the same
/// uuid, type and start date, which is what a record delivered twice has); a record with a sync
/// identifier replaces the stored record with that identifier only when its sync version is
/// higher (a missing version counts as 0). One exception: a heartbeat series whose uuid is stored
/// with a lower sync version is a later version of a series published as it grows, and extends
/// the stored one in place, moving it to a new anchor.
///
/// Anchors: each object written takes the next anchor of one sequence (`anchors.latest`, read at
/// the start of every transaction, so another process writing in between continues the same
/// sequence), and a deleted object leaves a tombstone with an anchor of its own.
///
/// This file holds the connection, the transaction and the anchor sequence. Each record kind's
/// writer is an extension in `RecordWriter+<Kind>.swift` (quantity samples, heartbeat series,
/// correlations, workouts); the sync-version rules, tombstones and interning (devices, types,
/// units, metadata sets) have one each, as do deletion, followers and clock correction.
final class RecordWriter {
    /// The database file.
    let path: String
    let connection: SQLiteConnection
    /// The wall clock deletions are dated with (tombstone retention compares these dates).
    let now: @Sendable () -> Date
    // Ids of rows that are never deleted: devices, metadata sets, quantity types and units. Each
    // forgets what a failed transaction learned (its rows were rolled back) and keeps what
    // committed ones learned; see RowIDCache. 4096 devices is more than a gateway serves. Used by
    // RecordWriter+Interning.swift, which commits and rolls them back.
    var deviceIDs = RowIDCache<Device>(limit: 4096)
    var metadataSets = MetadataSetInterner()
    var typeIDs = RowIDCache<String>(limit: 4096)
    var unitIDs = RowIDCache<String>(limit: 4096)
    // The last device looked up and its row id, recognized in the next sample by identity
    // (Device.isIdentical(to:)): a batch's samples mostly share one device value. Forgotten when a
    // transaction fails, since it may be one that transaction inserted.
    var lastDevice: (device: Device?, id: Int64?)?
    // The last quantity type and its canonical unit's id: a batch is mostly of one type, in its
    // canonical unit, so the common sample needs no dictionary lookup. Forgotten with the caches.
    var lastType: (identifier: String, id: Int64, canonicalUnitID: Int64)?
    // The longest duration stored per type id. Emptied when a transaction fails: it may hold a
    // value whose update was rolled back, and a cleared cache only costs updates.
    var spans: [Int64: Int64] = [:]
    // The longest series span stored per type id, kept like `spans`.
    var seriesSpans: [Int64: Int64] = [:]
    /// The quantity series readings are folded into (RecordWriter+QuantitySeries.swift).
    var openSeries = OpenSeriesTable()
    /// What incoming readings are attributed by (RecordWriter+Attributing.swift).
    var incoming = IncomingAttribution()
    /// What attribution did and decides by, for `status` and the live view: each committed
    /// transaction's counts, and the attribution once it changed.
    let committedAttribution = CommittedAttribution()
    /// The monotonic clock that tells when a series stopped growing.
    let uptime: @Sendable () -> Duration
    /// The origin of the default monotonic clock: an instant, never changed.
    static let clockOrigin = ContinuousClock.now
    /// The default monotonic clock: the time since ``clockOrigin``.
    static let processUptime: @Sendable () -> Duration = { clockOrigin.duration(to: .now) }
    /// Within a transaction: the last anchor handed out.
    private var latestAnchor: Int64 = 0
    /// Within a transaction: whether any tombstone exists, so that an object stored again
    /// removes its tombstone; read at the start of each transaction.
    var hasTombstones = false
    /// Within a transaction: the workouts it stored, whose curves are written at its end, once
    /// the series it grew are written too (RecordWriter+WorkoutCurves.swift).
    var workoutsToCondense: [Workout] = []
    /// Within a transaction: whether it handed out an anchor (set just before the commit).
    private var changedLog = false
    /// Within a transaction: an estimate of the bytes its changes take in the store, for the
    /// followers' retention bounds (`log_commits`).
    var transactionBytes = 0
    /// Whether any follower is registered: only then is each transaction's `log_commits` row
    /// written. Read at open, kept up to date by ``registerFollower(_:startingAt:)`` and
    /// ``removeFollowers(keeping:)``.
    var hasFollowers = false
    /// What the store keeps once every follower acknowledged it.
    var retention: LogRetention = .everything
    /// Told the latest anchor after every commit that changed the log (from the writer's queue).
    var onCommit: (@Sendable (Int64) -> Void)?
    /// The clock base the last ``correctClock(onto:from:now:)`` moved the store onto: a record
    /// written later on an earlier base of the same boot (queued in a sink's batch while the
    /// correction ran) is moved onto it as it is written, as the correction moved those stored.
    var correctedBase: ClockBase?

    /// Interrupts the write running on the writer's thread, from any thread (a forced stop).
    var interruptHandle: SQLiteInterruptHandle { connection.interruptHandle }

    /// Pages of write-ahead log between two automatic checkpoints.
    static let checkpointPages = 4000

    /// Opens (creating if needed) and migrates the store at `path`.
    /// - Parameter maximumPageCount: `PRAGMA max_page_count`, a size limit; nil for SQLite's default.
    /// - Throws: ``StoreError`` with `.notAStore`, `.schemaTooNew`, `.corrupt`, `.ioError`, `.readOnly`, …
    init(
        path: String, maximumPageCount: Int? = nil, now: @escaping @Sendable () -> Date = { Date() },
        uptime: @escaping @Sendable () -> Duration = RecordWriter.processUptime
    ) throws(StoreError) {
        self.path = path
        self.now = now
        self.uptime = uptime
        do {
            // Whose file it is, before anything is written: switching to WAL rewrites the header.
            connection = try SQLiteConnection(
                path: path, mode: .readWrite, writeAheadLog: false, synchronous: StoreDurability.synchronous)
            try StoreFileCheck.refuse(connection, path: path, unless: .upgradable)
            try connection.enableWriteAheadLog()
            // A checkpoint writes each page changed since the last one back into the file: every
            // 4000 pages of log (16 MB) instead of SQLite's 1000, the hot pages of a class (its
            // open series, the change log's tail) are written back a quarter as often. The log
            // is truncated back to that size after a checkpoint when a long transaction grew it.
            try connection.execute("PRAGMA wal_autocheckpoint = \(Self.checkpointPages)")
            try connection.execute("PRAGMA journal_size_limit = \(Self.checkpointPages * 4096)")
            try connection.migrate(StoreSchema.migrations)
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            if error.refusal == .schemaTooNew {
                throw StoreError(.schemaTooNew, path: path, message: error.message, sqliteCode: error.code)
            }
            throw StoreError(error, path: path)
        } catch {
            throw StoreError.wrap(error, path: path)
        }
        if let maximumPageCount { try setMaximumPageCount(maximumPageCount) }
        do {
            hasFollowers = try connection.query("SELECT EXISTS (SELECT 1 FROM followers)").first?.integer(0) == 1
            try loadOpenSeries()
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Sets `PRAGMA max_page_count` (the database's size limit in pages) for this connection.
    func setMaximumPageCount(_ pages: Int) throws(StoreError) {
        do {
            try connection.execute("PRAGMA max_page_count = \(max(1, pages))")
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Runs `body` in ONE immediate transaction with the anchor sequence loaded, saving the
    /// sequence before the commit. On any error the whole transaction is rolled back and every
    /// cache forgets what it learned in it, so the call can be retried.
    func transaction<T>(_ body: () throws -> T) throws(StoreError) -> T {
        changedLog = false
        do {
            let result = try connection.transaction(.immediate) { () throws -> T in
                let state = try connection.query("SELECT latest, EXISTS (SELECT 1 FROM tombstones) FROM anchors")
                latestAnchor = state.first?.integer(0) ?? 0
                hasTombstones = state.first?.integer(1) == 1
                transactionBytes = 0
                workoutsToCondense = []
                let first = latestAnchor
                let result = try body()
                try writeSeriesChanges()
                try writeCurves()
                if latestAnchor != first {
                    try connection.run("UPDATE anchors SET latest = ?1", [.integer(latestAnchor)])
                    if hasFollowers {
                        try connection.run(
                            "INSERT OR REPLACE INTO log_commits (last_anchor, committed_us, bytes) VALUES (?1, ?2, ?3)",
                            [.integer(latestAnchor), .integer(StoreTime.microseconds(now())), .integer(Int64(transactionBytes))])
                    }
                    changedLog = true
                }
                return result
            }
            if changedLog {
                changedLog = false
                onCommit?(latestAnchor)
            }
            keepInterned()
            return result
        } catch {
            forgetInterned()
            throw StoreError.wrap(error, path: path)
        }
    }

    /// The next anchor of the sequence; only inside ``transaction(_:)``.
    func nextAnchor() -> Int64 {
        latestAnchor += 1
        return latestAnchor
    }

    /// Gives back `anchor`, the last one drawn, when nothing was stored at it.
    func returnAnchor(_ anchor: Int64) {
        if anchor == latestAnchor { latestAnchor -= 1 }
    }

    /// Writes `records` and then `checkpoints` (in order; a later one with the same namespace
    /// and key replaces an earlier one) in ONE immediate transaction: a checkpoint is never
    /// stored without the records published with it, nor they without it. Each reading is
    /// attributed to its person in that transaction (``attributeIncoming(_:counts:)``), and an
    /// erased person's readings from before their erase are not stored.
    /// - Throws: ``StoreError``; `.diskFull` for SQLITE_FULL, `.ioError` for SQLITE_IOERR. On any
    ///   error nothing is stored, so the call can be retried with the same records.
    func write(_ records: [HealthRecord], checkpoints: [SourceCheckpoint]) throws(StoreError) -> WriteSummary {
        // Nothing to look at before the clock's first step: the common case costs nothing.
        let records = correctedBase.map { base in records.map { $0.rebased(onto: base) ?? $0 } } ?? records
        var counts = AttributionCounts()
        var changed = false
        var summary = try transaction {
            counts = AttributionCounts()
            let attributed = try attributeIncoming(records, counts: &counts)
            changed = attributed.changed
            let summary = try writeRecords(attributed.records)
            if !checkpoints.isEmpty { try writeCheckpoints(checkpoints) }
            return summary
        }
        committedAttribution.add(counts, attribution: changed ? incoming.attribution : nil)
        // Read after the commit: the series the transaction changed take their anchors at its end.
        summary.latestAnchor = latestAnchor
        return summary
    }

    /// Deletes the tombstones of objects deleted before `date`, in one transaction; a client
    /// whose anchor is older then gets `.anchorExpired`.
    /// - Returns: how many tombstones went.
    /// Tombstones a follower has not acknowledged stay, whatever their age.
    func purgeTombstones(deletedBefore date: Date) throws(StoreError) -> Int {
        try transaction {
            // The followers' slowest cursor (the latest anchor without followers).
            let acknowledged = try connection.query(
                "SELECT ifnull((SELECT min(anchor) FROM followers), (SELECT latest FROM anchors))").first?.integer(0) ?? 0
            let bounds: [SQLiteValue] = [.integer(StoreTime.microseconds(date)), .integer(acknowledged)]
            try connection.run(StoreSchema.recordPurgedAnchor, bounds)
            return try connection.run(StoreSchema.deletePurgedTombstones, bounds)
        }
    }

    /// Runs `PRAGMA wal_checkpoint(TRUNCATE)`, folding the write-ahead log into the database.
    func checkpoint() throws(StoreError) {
        do {
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        } catch {
            throw StoreError(error, path: path)
        }
    }

    private func writeCheckpoints(_ checkpoints: [SourceCheckpoint]) throws(SQLiteError) {
        let upsert = try connection.statement(StoreSchema.upsertSourceCheckpoint)
        for checkpoint in checkpoints {
            upsert.bind(checkpoint.namespace, at: 1)
            upsert.bind(checkpoint.key, at: 2)
            checkpoint.payload.withUnsafeBytes { upsert.bind(bytes: $0, at: 3) }
            try upsert.runAndReset()
        }
    }

    /// Writes each record with the writer of its kind; only inside ``transaction(_:)``.
    func writeRecords(_ records: [HealthRecord]) throws -> WriteSummary {
        var summary = WriteSummary()
        var latest = Int64.min
        // One prepared statement for the whole batch: no cache lookup per row. Fetching it clears
        // its bindings, so the bound-value memo starts empty.
        var insert = QuantityInsert(statement: try connection.statement(StoreSchema.insertSample))
        var vacated = try vacateGrowingHeartbeatSeries(in: records)
        for index in records.indices {
            let outcome: Outcome
            let end: Date
            // A reading folded into a series adds no row of its own: its bytes are counted when
            // its series is written (writeSeriesChanges).
            var folded = false
            switch records[index] {
            case .quantity(let sample):
                if let foldedOutcome = try fold(sample) {
                    outcome = foldedOutcome
                    folded = true
                } else {
                    outcome = try write(sample, using: &insert).outcome
                }
                end = sample.endDate
            case .quantitySeries(let series):
                outcome = try write(series)
                end = series.endDate
            case .heartbeatSeries(let series):
                outcome = try write(series, vacated: &vacated)
                end = series.endDate
            case .workout(let workout):
                outcome = try write(workout)
                end = workout.endDate
            case .correlation(let correlation):
                outcome = try write(correlation, using: &insert)
                end = correlation.endDate
            }
            switch outcome {
            case .inserted: summary.inserted += 1
            case .replaced: summary.replaced += 1
            case .ignored: summary.ignored += 1
            case .refused: summary.refuse(records[index])
            }
            if outcome != .ignored, outcome != .refused, !folded { transactionBytes += LogRetention.estimatedBytes(of: records[index]) }
            let endMicros = StoreTime.microseconds(end)
            if endMicros > latest { latest = endMicros }
        }
        if latest != .min { summary.lastRecordDate = StoreTime.date(microseconds: latest) }
        try closeIdleSeries()
        return summary
    }

    /// How one record changed the store (counted in ``WriteSummary``).
    enum Outcome { case inserted, replaced, ignored, refused }
}
