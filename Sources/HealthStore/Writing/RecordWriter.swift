public import FoundationEssentials
import HealthModel
import SQLite

/// How one write changed the store.
public struct WriteSummary: Hashable, Sendable {
    /// Records stored for the first time.
    public var inserted = 0
    /// Records that replaced an older sync version of the same sync identifier.
    public var replaced = 0
    /// Records that changed nothing: stored already, or a version at least as new is.
    public var ignored = 0
    /// The latest end date among the records written.
    public var lastRecordDate: Date?
    /// The greatest anchor the store has handed out once the write committed.
    public var latestAnchor: Int64 = 0

    /// An empty summary.
    public init() {}
}

/// The store's writer: one read-write connection and what it remembers between transactions.
///
/// Not thread-safe: ``StoreWriter`` confines it to one serial queue. It opens the file in WAL
/// mode, refuses a file that is not a healthgate store, and migrates the schema to
/// ``StoreSchema/version``.
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
final class RecordWriter {
    /// The database file.
    let path: String
    let connection: SQLiteConnection
    /// The wall clock deletions are dated with (tombstone retention compares these dates).
    let now: @Sendable () -> Date
    // Ids of rows that are never deleted: devices, metadata sets, quantity types and units. Each
    // forgets what a failed transaction learned (its rows were rolled back) and keeps what
    // committed ones learned; see RowIDCache. 4096 devices is more than a gateway serves.
    private var deviceIDs = RowIDCache<Device>(limit: 4096)
    private var metadataSets = MetadataSetInterner()
    private var typeIDs = RowIDCache<String>(limit: 4096)
    private var unitIDs = RowIDCache<String>(limit: 4096)
    // The last device looked up and its row id, recognized in the next sample by identity
    // (Device.isIdentical(to:)): a batch's samples mostly share one device value. Forgotten when a
    // transaction fails, since it may be one that transaction inserted.
    private var lastDevice: (device: Device?, id: Int64?)?
    // The last quantity type and its canonical unit's id: a batch is mostly of one type, in its
    // canonical unit, so the common sample needs no dictionary lookup. Forgotten with the caches.
    private var lastType: (identifier: String, id: Int64, canonicalUnitID: Int64)?
    // The longest duration stored per type id. Emptied when a transaction fails: it may hold a
    // value whose update was rolled back, and a cleared cache only costs updates.
    private var spans: [Int64: Int64] = [:]
    /// Within a transaction: the last anchor handed out.
    private var latestAnchor: Int64 = 0
    /// Within a transaction: whether any tombstone exists, so that an object stored again
    /// removes its tombstone; read at the start of each transaction.
    private var hasTombstones = false
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

    /// Interrupts the write running on the writer's thread, from any thread (a forced stop).
    var interruptHandle: SQLiteInterruptHandle { connection.interruptHandle }

    /// Opens (creating if needed) and migrates the store at `path`.
    /// - Parameter maximumPageCount: `PRAGMA max_page_count`, a size limit; nil for SQLite's default.
    /// - Throws: ``StoreError`` with `.notAStore`, `.schemaTooNew`, `.corrupt`, `.ioError`, `.readOnly`, …
    init(path: String, maximumPageCount: Int? = nil, now: @escaping @Sendable () -> Date = { Date() }) throws(StoreError) {
        self.path = path
        self.now = now
        do {
            // Whose file it is, before anything is written: switching to WAL rewrites the header.
            connection = try SQLiteConnection(path: path, mode: .readWrite, writeAheadLog: false)
            try StoreFileCheck.refuse(connection, path: path, unless: .upgradable)
            try connection.enableWriteAheadLog()
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
                let first = latestAnchor
                let result = try body()
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
            deviceIDs.commit()
            metadataSets.commit()
            typeIDs.commit()
            unitIDs.commit()
            return result
        } catch {
            deviceIDs.rollback()
            metadataSets.rollback()
            typeIDs.rollback()
            unitIDs.rollback()
            lastDevice = nil
            lastType = nil
            spans = [:]
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
    /// stored without the records published with it, nor they without it.
    /// - Throws: ``StoreError``; `.diskFull` for SQLITE_FULL, `.ioError` for SQLITE_IOERR. On any
    ///   error nothing is stored, so the call can be retried with the same records.
    func write(_ records: [HealthRecord], checkpoints: [SourceCheckpoint]) throws(StoreError) -> WriteSummary {
        try transaction {
            var summary = try writeRecords(records)
            if !checkpoints.isEmpty { try writeCheckpoints(checkpoints) }
            summary.latestAnchor = latestAnchor
            return summary
        }
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

    func writeRecords(_ records: [HealthRecord]) throws -> WriteSummary {
        var summary = WriteSummary()
        var latest = Int64.min
        // One prepared statement for the whole batch: no cache lookup per row. Fetching it clears
        // its bindings, so the bound-value memo starts empty.
        var insert = QuantityInsert(statement: try connection.statement(StoreSchema.insertSample))
        for index in records.indices {
            let outcome: Outcome
            let end: Date
            switch records[index] {
            case .quantity(let sample):
                outcome = try write(sample, using: &insert).outcome
                end = sample.endDate
            case .heartbeatSeries(let series):
                outcome = try write(series)
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
            }
            if outcome != .ignored { transactionBytes += LogRetention.estimatedBytes(of: records[index]) }
            let endMicros = StoreTime.microseconds(end)
            if endMicros > latest { latest = endMicros }
        }
        if latest != .min { summary.lastRecordDate = StoreTime.date(microseconds: latest) }
        return summary
    }

    /// The insert statement with a memo of what is bound to it. `sqlite3_reset` keeps bindings,
    /// so consecutive samples of one type, unit and device, without an original value, metadata
    /// or sync keys, rebind only what changed.
    private struct QuantityInsert {
        let statement: SQLiteStatement
        var typeID: Int64?
        var unitID: Int64?
        var deviceID: Int64??
        /// The parameters 6 and 10 (original value and metadata set) are bound to NULL.
        var optionalsNull = false
        var duration: Int64?
    }

    private enum Outcome { case inserted, replaced, ignored }

    // MARK: Quantity samples (the hot path)

    /// Writes one sample; returns what happened and the anchor of the row that holds the sample
    /// now (nil when a stored sample with the same sync identifier and a version at least as
    /// new wins).
    private func write(_ sample: QuantitySample, using insert: inout QuantityInsert) throws -> (outcome: Outcome, anchor: Int64?) {
        var replacing = false
        var syncIdentifier: String?
        var syncVersion: Int64?
        if !sample.metadata.isEmpty {
            syncIdentifier = sample.metadata.syncIdentifier
            syncVersion = sample.metadata.syncVersion
        }
        let (typeID, canonicalUnitID) = try typeIDs(for: sample.type)
        let start = StoreTime.microseconds(sample.startDate)
        if let syncIdentifier {
            switch try resolveSample(sample, syncIdentifier: syncIdentifier, version: syncVersion ?? 0) {
            case .ignore(let anchor): return (.ignored, anchor)
            case .replace: replacing = true
            case .insert: break
            }
        }
        let canonical = sample.quantity.unit == sample.type.canonicalUnit
        let unitID = canonical ? canonicalUnitID : try unitID(for: sample.quantity.unit.unitString)
        let deviceID = try deviceID(of: sample)
        // A sample's set holds its sync keys too (samples have no columns for them).
        let metadataSetID = sample.metadata.isEmpty ? nil : try metadataSets.id(of: sample.metadata, in: connection)
        let duration = StoreTime.microseconds(sample.endDate) &- start
        let anchor = nextAnchor()
        let statement = insert.statement
        statement.bind(anchor, at: 1)
        if insert.typeID != typeID {
            statement.bind(typeID, at: 3)
            insert.typeID = typeID
        }
        // Already canonical (the usual case): no conversion, and no second copy of the value.
        let value = canonical ? sample.quantity.value : sample.canonicalValue
        statement.bind(value, at: 4)
        if insert.unitID != unitID {
            statement.bind(unitID, at: 5)
            insert.unitID = unitID
        }
        let original = canonical || sample.quantity.value == value ? nil : sample.quantity.value
        statement.bind(start, at: 7)
        if insert.duration != duration {
            statement.bind(duration, at: 8)
            insert.duration = duration
        }
        if insert.deviceID != .some(deviceID) {
            if let deviceID { statement.bind(deviceID, at: 9) } else { statement.bindNull(at: 9) }
            insert.deviceID = .some(deviceID)
        }
        if original == nil, metadataSetID == nil {
            if !insert.optionalsNull {
                statement.bindNull(at: 6)
                statement.bindNull(at: 10)
                insert.optionalsNull = true
            }
        } else {
            if let original { statement.bind(original, at: 6) } else { statement.bindNull(at: 6) }
            if let metadataSetID { statement.bind(metadataSetID, at: 10) } else { statement.bindNull(at: 10) }
            insert.optionalsNull = false
        }
        // The uuid's bytes are bound without a copy: they live until the statement is reset.
        var key = (sample.id.high.bigEndian, sample.id.low.bigEndian)
        try withUnsafeBytes(of: &key) { (bytes) throws(SQLiteError) in
            statement.bind(staticBytes: bytes, at: 2)
            try statement.runAndReset()
        }
        guard connection.changes > 0 else {
            // Stored already: the anchor drawn is given back (it was the last one drawn), so a
            // batch delivered twice does not move the log's latest anchor.
            returnAnchor(anchor)
            return (.ignored, try storedAnchor(typeID: typeID, start: start, id: sample.id))
        }
        if let syncIdentifier {
            try connection.run(
                "INSERT INTO sample_sync (sync_identifier, anchor, sync_version) VALUES (?1, ?2, ?3)",
                [.text(syncIdentifier), .integer(anchor), .integer(syncVersion ?? 0)])
        }
        if hasTombstones { try removeTombstone(of: sample.id) }
        if duration > 0, duration > spans[typeID] ?? 0 {
            try connection.run(
                "UPDATE quantity_types SET max_duration_us = ?2 WHERE id = ?1 AND max_duration_us < ?2",
                [.integer(typeID), .integer(duration)])
            spans[typeID] = duration
        }
        return (replacing ? .replaced : .inserted, anchor)
    }

    /// The anchor of the stored sample with this type, start and uuid.
    private func storedAnchor(typeID: Int64, start: Int64, id: SampleID) throws(SQLiteError) -> Int64? {
        try connection.query(
            "SELECT anchor FROM samples WHERE type_id = ?1 AND start_us = ?2 AND uuid = ?3",
            [.integer(typeID), .integer(start), .blob(id.bytes)]
        ).first?.integer(0)
    }

    private enum SampleDecision { case insert, replace, ignore(anchor: Int64?) }

    /// The sync rules for a quantity sample with a sync identifier: the stored sample with that
    /// identifier wins unless this one's version is higher; then the stored one is deleted (its
    /// tombstone written) and this one is inserted.
    private func resolveSample(
        _ sample: QuantitySample, syncIdentifier: String, version: Int64
    ) throws -> SampleDecision {
        guard let existing = try connection.query(
            """
            SELECT s.anchor, s.uuid, y.sync_version, s.type_id FROM sample_sync y JOIN samples s ON s.anchor = y.anchor
            WHERE y.sync_identifier = ?1
            """, [.text(syncIdentifier)]).first, let anchor = existing.integer(0)
        else { return .insert }
        guard version > existing.integer(2) ?? 0 else { return .ignore(anchor: anchor) }
        let typeName = try connection.query(
            "SELECT identifier FROM quantity_types WHERE id = ?1", [existing.values[3]]).first?.text(0) ?? sample.type.identifier
        try deleteObject(table: "samples", anchor: anchor, uuid: existing.values[1], kind: .quantity, type: typeName)
        return .replace
    }

    // MARK: Heartbeat series

    private func write(_ series: HeartbeatSeriesSample) throws -> Outcome {
        if let outcome = try extend(series) { return outcome }
        let syncIdentifier = series.metadata.syncIdentifier
        let decision = try resolve(
            table: "heartbeat_series", kind: .heartbeatSeries, id: series.id, syncIdentifier: syncIdentifier,
            version: series.metadata.syncVersion ?? 0)
        if decision == .ignore { return .ignored }
        let id = SQLiteValue.blob(series.id.bytes)
        try connection.run(
            """
            INSERT INTO heartbeat_series (anchor, uuid, start_us, end_us, beat_count, device_id, sync_identifier,
                sync_version, metadata_set_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            """,
            [.integer(nextAnchor()), id, .integer(StoreTime.microseconds(series.startDate)),
             .integer(StoreTime.microseconds(series.endDate)), .integer(Int64(series.beats.count)),
             try deviceID(for: series.device).map(SQLiteValue.integer) ?? .null,
             syncIdentifier.map(SQLiteValue.text) ?? .null,
             series.metadata.syncVersion.map(SQLiteValue.integer) ?? .null,
             try metadataSetID(for: series.metadata).map(SQLiteValue.integer) ?? .null])
        if hasTombstones { try removeTombstone(of: series.id) }
        try insertBeats(of: series, from: 0)
        try WorkoutLinks.linkSeries(
            id, start: series.startDate, end: series.endDate, device: series.device, connection: connection)
        return decision == .replace ? .replaced : .inserted
    }

    /// A series whose uuid is stored already, with a higher sync version: a series published
    /// again as it grows (metadata `healthgate.provisional`). Its row moves to a new anchor and
    /// is updated in place, and only the beats past those stored are written: a later version
    /// with the same start extends the earlier one (beats are only ever appended), so each
    /// version costs what it adds. A version with another start has every beat rewritten.
    /// - Returns: nil when the uuid is not stored (the ordinary rules apply).
    private func extend(_ series: HeartbeatSeriesSample) throws -> Outcome? {
        let id = SQLiteValue.blob(series.id.bytes)
        guard let stored = try connection.query(
            "SELECT ifnull(sync_version, 0), start_us, beat_count FROM heartbeat_series WHERE uuid = ?1", [id]).first
        else { return nil }
        guard let version = series.metadata.syncVersion, version > stored.integer(0) ?? 0 else { return .ignored }
        let start = StoreTime.microseconds(series.startDate)
        let kept = stored.integer(1) == start ? min(Int(stored.integer(2) ?? 0), series.beats.count) : 0
        try connection.run(
            """
            UPDATE heartbeat_series SET anchor = ?2, start_us = ?3, end_us = ?4, beat_count = ?5, device_id = ?6,
                sync_identifier = ?7, sync_version = ?8, metadata_set_id = ?9
            WHERE uuid = ?1
            """,
            [id, .integer(nextAnchor()), .integer(start), .integer(StoreTime.microseconds(series.endDate)),
             .integer(Int64(series.beats.count)), try deviceID(for: series.device).map(SQLiteValue.integer) ?? .null,
             series.metadata.syncIdentifier.map(SQLiteValue.text) ?? .null, .integer(version),
             try metadataSetID(for: series.metadata).map(SQLiteValue.integer) ?? .null])
        try connection.run(
            "DELETE FROM heartbeats WHERE series_uuid = ?1 AND beat_index >= ?2", [id, .integer(Int64(kept))])
        try insertBeats(of: series, from: kept)
        // Grown, it may now overlap a workout the earlier version did not reach.
        try WorkoutLinks.linkSeries(
            id, start: series.startDate, end: series.endDate, device: series.device, connection: connection)
        return .replaced
    }

    private func insertBeats(of series: HeartbeatSeriesSample, from first: Int) throws(SQLiteError) {
        guard first < series.beats.count else { return }
        let beat = try connection.statement(
            "INSERT INTO heartbeats (series_uuid, beat_index, time_since_start, preceded_by_gap) VALUES (?1, ?2, ?3, ?4)")
        var key = (series.id.high.bigEndian, series.id.low.bigEndian)
        for index in first..<series.beats.count {
            let heartbeat = series.beats[index]
            withUnsafeBytes(of: &key) { beat.bind(bytes: $0, at: 1) }
            beat.bind(Int64(index), at: 2)
            beat.bind(heartbeat.timeSinceSeriesStart, at: 3)
            beat.bind(Int64(heartbeat.precededByGap ? 1 : 0), at: 4)
            try beat.runAndReset()
        }
    }

    // MARK: Correlations

    /// The correlation's row, its members as ordinary samples (a member stored already is kept
    /// as it is) and the links between them.
    private func write(_ correlation: CorrelationSample, using insert: inout QuantityInsert) throws -> Outcome {
        let syncIdentifier = correlation.metadata.syncIdentifier
        let decision = try resolve(
            table: "correlations", kind: .correlation, id: correlation.id, syncIdentifier: syncIdentifier,
            version: correlation.metadata.syncVersion ?? 0)
        if decision == .ignore { return .ignored }
        let id = SQLiteValue.blob(correlation.id.bytes)
        try connection.run(
            """
            INSERT INTO correlations (anchor, uuid, type, start_us, end_us, device_id, sync_identifier, sync_version,
                metadata_set_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            """,
            [.integer(nextAnchor()), id, .text(correlation.type.identifier),
             .integer(StoreTime.microseconds(correlation.startDate)), .integer(StoreTime.microseconds(correlation.endDate)),
             try deviceID(for: correlation.device).map(SQLiteValue.integer) ?? .null,
             syncIdentifier.map(SQLiteValue.text) ?? .null,
             correlation.metadata.syncVersion.map(SQLiteValue.integer) ?? .null,
             try metadataSetID(for: correlation.metadata).map(SQLiteValue.integer) ?? .null])
        if hasTombstones { try removeTombstone(of: correlation.id) }
        for (index, member) in correlation.objects.enumerated() {
            guard let anchor = try write(member, using: &insert).anchor else {
                throw SQLiteError(
                    .constraint, message: "member \(member.id) is held back by another sample with its sync identifier",
                    context: "correlation \(correlation.id)")
            }
            try connection.run(
                "INSERT INTO correlation_members (correlation_uuid, member_index, sample_anchor) VALUES (?1, ?2, ?3)",
                [id, .integer(Int64(index)), .integer(anchor)])
        }
        return decision == .replace ? .replaced : .inserted
    }

    // MARK: Workouts

    private func write(_ workout: Workout) throws -> Outcome {
        // The workout in progress becomes the stored workout in this transaction (schema
        // version 4), also when this is a copy of a workout already stored.
        try connection.run("DELETE FROM live_workouts WHERE uuid = ?1", [.blob(workout.id.bytes)])
        let syncIdentifier = workout.metadata.syncIdentifier
        let decision = try resolve(
            table: "workouts", kind: .workout, id: workout.id, syncIdentifier: syncIdentifier,
            version: workout.metadata.syncVersion ?? 0)
        if decision == .ignore { return .ignored }
        let id = SQLiteValue.blob(workout.id.bytes)
        try connection.run(
            """
            INSERT INTO workouts (anchor, uuid, activity_type, start_us, end_us, duration, sync_identifier, sync_version,
                metadata_set_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            """,
            [.integer(nextAnchor()), id, .text(workout.activityType.rawValue),
             .integer(StoreTime.microseconds(workout.startDate)), .integer(StoreTime.microseconds(workout.endDate)),
             .real(workout.duration), syncIdentifier.map(SQLiteValue.text) ?? .null,
             workout.metadata.syncVersion.map(SQLiteValue.integer) ?? .null,
             try metadataSetID(for: workout.metadata).map(SQLiteValue.integer) ?? .null])
        if hasTombstones { try removeTombstone(of: workout.id) }
        for (index, event) in workout.events.enumerated() {
            var metadataJSON = SQLiteValue.null
            if !event.metadata.isEmpty {
                do {
                    let data = try HealthJSON.makeEncoder().encode(event.metadata)
                    metadataJSON = .text(String(decoding: data, as: UTF8.self))
                } catch {
                    throw SQLiteError(.mismatch, message: "workout event metadata cannot be encoded: \(error)",
                                      context: "workout \(workout.id)")
                }
            }
            try connection.run(
                """
                INSERT INTO workout_events (workout_uuid, event_index, type, start_us, end_us, metadata)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                """,
                [id, .integer(Int64(index)), .text(event.type.rawValue), .integer(StoreTime.microseconds(event.startDate)),
                 .integer(StoreTime.microseconds(event.endDate)), metadataJSON])
        }
        for (index, activity) in workout.activities.enumerated() {
            let activityID = SQLiteValue.blob(activity.id.bytes)
            try connection.run(
                """
                INSERT INTO workout_activities (uuid, workout_uuid, activity_index, activity_type, start_us, end_us)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING
                """,
                [activityID, id, .integer(Int64(index)), .text(activity.activityType.rawValue),
                 .integer(StoreTime.microseconds(activity.startDate)),
                 activity.endDate.map { .integer(StoreTime.microseconds($0)) } ?? .null])
            for statistics in activity.statistics {
                try writeStatistics(statistics, owner: activityID, workout: id)
            }
        }
        for statistics in workout.statistics {
            try writeStatistics(statistics, owner: id, workout: id)
        }
        for sampleID in workout.sampleIDs {
            try connection.run(
                "INSERT INTO workout_samples (workout_uuid, sample_uuid) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                [id, .blob(sampleID.bytes)])
        }
        try WorkoutLinks.linkSeries(to: workout, connection: connection)
        return decision == .replace ? .replaced : .inserted
    }

    private func writeStatistics(
        _ statistics: QuantityStatistics, owner: SQLiteValue, workout: SQLiteValue
    ) throws(SQLiteError) {
        func real(_ value: Double?) -> SQLiteValue { value.map(SQLiteValue.real) ?? .null }
        try connection.run(
            """
            INSERT INTO workout_statistics (owner_uuid, workout_uuid, type, start_us, end_us, sample_count,
                sum, average, minimum, maximum, most_recent, most_recent_us)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
            ON CONFLICT DO NOTHING
            """,
            [owner, workout, .text(statistics.type.identifier), .integer(StoreTime.microseconds(statistics.startDate)),
             .integer(StoreTime.microseconds(statistics.endDate)), .integer(Int64(statistics.sampleCount)),
             real(statistics.sum), real(statistics.average), real(statistics.minimum), real(statistics.maximum),
             real(statistics.mostRecent), statistics.mostRecentDate.map { .integer(StoreTime.microseconds($0)) } ?? .null])
    }

    // MARK: Shared pieces

    private enum Decision { case insert, replace, ignore }

    /// Applies the uuid and sync-version rules for a record about to be inserted into `table`
    /// (correlations, heartbeat series, workouts: tables with a unique uuid), deleting the older
    /// version, with its tombstone, when the new one replaces it.
    private func resolve(
        table: String, kind: HealthRecordKind, id: SampleID, syncIdentifier: String?, version: Int64
    ) throws -> Decision {
        let key = SQLiteValue.blob(id.bytes)
        if try !connection.query("SELECT 1 FROM \(table) WHERE uuid = ?1", [key]).isEmpty { return .ignore }
        guard let syncIdentifier else { return .insert }
        let typeColumn = kind == .correlation ? "type" : "'\(kind.rawValue)'"
        guard let existing = try connection.query(
            "SELECT anchor, uuid, ifnull(sync_version, 0), \(typeColumn) FROM \(table) WHERE sync_identifier = ?1",
            [.text(syncIdentifier)]).first, let anchor = existing.integer(0)
        else { return .insert }
        guard version > existing.integer(2) ?? 0 else { return .ignore }
        if kind == .correlation {
            // The members are samples of their own; the newer version brings its own.
            for member in try connection.query(
                """
                SELECT s.anchor, s.uuid, t.identifier FROM correlation_members m
                JOIN samples s ON s.anchor = m.sample_anchor JOIN quantity_types t ON t.id = s.type_id
                WHERE m.correlation_uuid = ?1
                """, [existing.values[1]])
            {
                guard let memberAnchor = member.integer(0) else { continue }
                try deleteObject(
                    table: "samples", anchor: memberAnchor, uuid: member.values[1], kind: .quantity,
                    type: member.text(2) ?? "")
            }
        }
        if kind == .workout {
            try connection.run("DELETE FROM workout_statistics WHERE workout_uuid = ?1", [existing.values[1]])
        }
        // Child rows of heartbeat series, correlations and workouts go with ON DELETE CASCADE. The
        // metadata set stays: other records may share it, and an unused one is harmless.
        try deleteObject(table: table, anchor: anchor, uuid: existing.values[1], kind: kind, type: existing.text(3) ?? "")
        return .replace
    }

    /// Deletes the object at `anchor` from `table` (a sample with its sync identifier) and
    /// writes its tombstone with the next anchor.
    func deleteObject(table: String, anchor: Int64, uuid: SQLiteValue, kind: HealthRecordKind, type: String) throws {
        try writeTombstone(uuid: uuid, kind: kind, type: type, device: try deviceKey(table: table, anchor: anchor))
        if kind == .quantity {
            // Its sync identifier, if it has one, is an entry of its metadata set.
            try connection.run(
                """
                DELETE FROM sample_sync WHERE anchor = ?1 AND sync_identifier = (
                    SELECT e.value FROM samples s JOIN metadata_entries e ON e.set_id = s.metadata_set_id
                    WHERE s.anchor = ?1 AND e.key = 'syncIdentifier')
                """, [.integer(anchor)])
        }
        try connection.run("DELETE FROM \(table) WHERE anchor = ?1", [.integer(anchor)])
    }

    /// The device of the object at `anchor` in `table` as remote sinks name it (its local
    /// identifier, else its name), or nil: workouts have no device.
    private func deviceKey(table: String, anchor: Int64) throws(SQLiteError) -> String? {
        guard table != "workouts" else { return nil }
        return try connection.query(
            "SELECT coalesce(d.local_identifier, d.name) FROM \(table) x JOIN devices d ON d.id = x.device_id WHERE x.anchor = ?1",
            [.integer(anchor)]).first?.text(0)
    }

    /// Writes the tombstone of a deleted object with the next anchor (replacing an older
    /// tombstone of the same uuid), dated by the writer's clock.
    func writeTombstone(uuid: SQLiteValue, kind: HealthRecordKind, type: String, device: String?) throws(SQLiteError) {
        transactionBytes += LogRetention.tombstoneBytes
        try connection.run(
            "INSERT OR REPLACE INTO tombstones (anchor, uuid, kind, type, deleted_us, device) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            [.integer(nextAnchor()), uuid, .text(kind.rawValue), .text(type), .integer(StoreTime.microseconds(now())),
             device.map(SQLiteValue.text) ?? .null])
        hasTombstones = true
    }

    /// An object stored again after its deletion: its tombstone goes, so that it appears once
    /// in the change log, at its new anchor.
    private func removeTombstone(of id: SampleID) throws(SQLiteError) {
        try connection.run("DELETE FROM tombstones WHERE uuid = ?1", [.blob(id.bytes)])
    }

    /// The id of the metadata set holding `metadata`'s entries, sync keys left out; nil when
    /// nothing is left (no metadata, or only the sync keys).
    private func metadataSetID(for metadata: Metadata) throws(SQLiteError) -> Int64? {
        if metadata.isEmpty { return nil }
        let entries = StoreSchema.storedEntries(of: metadata)
        if entries.isEmpty { return nil }
        return try metadataSets.id(of: entries, in: connection)
    }

    /// The id of `type` in `quantity_types` (inserting it the first time) and the id of its
    /// canonical unit in `units`.
    private func typeIDs(for type: QuantityType) throws(SQLiteError) -> (type: Int64, canonicalUnit: Int64) {
        // Small strings (every built-in identifier) compare by their bits.
        if let lastType, lastType.identifier == type.identifier { return (lastType.id, lastType.canonicalUnitID) }
        let id: Int64
        if let cached = typeIDs[type.identifier] {
            id = cached
        } else {
            id = try internedID(
                insert: "INSERT INTO quantity_types (identifier) VALUES (?1) ON CONFLICT DO NOTHING",
                select: "SELECT id, max_duration_us FROM quantity_types WHERE identifier = ?1", type.identifier) { row in
                spans[row.integer(0) ?? 0] = row.integer(1) ?? 0
            }
            typeIDs.insert(id, for: type.identifier)
        }
        let canonicalUnitID = try unitID(for: type.canonicalUnit.unitString)
        lastType = (type.identifier, id, canonicalUnitID)
        return (id, canonicalUnitID)
    }

    /// The id of `unit` (a unit string) in `units`, inserting it the first time.
    private func unitID(for unit: String) throws(SQLiteError) -> Int64 {
        if let id = unitIDs[unit] { return id }
        let id = try internedID(
            insert: "INSERT INTO units (unit) VALUES (?1) ON CONFLICT DO NOTHING",
            select: "SELECT id FROM units WHERE unit = ?1", unit) { _ in }
        unitIDs.insert(id, for: unit)
        return id
    }

    private func internedID(
        insert: String, select: String, _ text: String, found: (SQLiteRow) -> Void
    ) throws(SQLiteError) -> Int64 {
        try connection.run(insert, [.text(text)])
        guard let row = try connection.query(select, [.text(text)]).first, let id = row.integer(0) else {
            throw SQLiteError(.error, message: "the row just inserted was not found", context: text)
        }
        found(row)
        return id
    }

    /// The id of `sample`'s device, recognized without a copy when it is the last one's.
    private func deviceID(of sample: borrowing QuantitySample) throws(SQLiteError) -> Int64? {
        let device = sample.device
        if let lastDevice, lastDevice.device.isIdentical(to: device) { return lastDevice.id }
        let id = try deviceID(for: device)
        lastDevice = (device, id)
        return id
    }

    private func deviceID(for device: Device?) throws(SQLiteError) -> Int64? {
        guard let device else { return nil }
        if let id = deviceIDs[device] { return id }
        let fields: [SQLiteValue] = [
            device.name, device.manufacturer, device.model, device.hardwareVersion, device.firmwareVersion,
            device.softwareVersion, device.localIdentifier, device.udiDeviceIdentifier,
        ].map { $0.map(SQLiteValue.text) ?? .null }
        try connection.run(
            """
            INSERT INTO devices (name, manufacturer, model, hardware_version, firmware_version,
                software_version, local_identifier, udi_device_identifier)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING
            """, fields)
        guard let id = try connection.query(
            """
            SELECT id FROM devices WHERE name IS ?1 AND manufacturer IS ?2 AND model IS ?3
                AND hardware_version IS ?4 AND firmware_version IS ?5 AND software_version IS ?6
                AND local_identifier IS ?7 AND udi_device_identifier IS ?8
            """, fields).first?.integer(0)
        else {
            throw SQLiteError(.error, message: "the device row just inserted was not found",
                              context: device.displayName)
        }
        deviceIDs.insert(id, for: device)
        return id
    }
}
