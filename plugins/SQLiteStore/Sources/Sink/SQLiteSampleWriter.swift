public import Foundation
public import HealthModel
public import SampleBus
import SQLite

/// How one ``SQLiteSampleWriter/write(_:)`` call changed the store.
public struct WriteSummary: Hashable, Sendable {
    /// Records stored for the first time.
    public var inserted = 0
    /// Records that replaced an older sync version of the same sync identifier.
    public var replaced = 0
    /// Records that changed nothing: the uuid was stored already, or a version at least as new.
    public var ignored = 0
    /// The latest end date among the records written.
    public var lastRecordDate: Date?

    /// An empty summary.
    public init() {}
}

/// Writes health records into a store file: one transaction per call, idempotent.
///
/// Not thread-safe: own it from one thread or serial queue (``SQLiteSink`` gives it its own
/// DispatchQueue). It opens the file read-write in WAL mode, creates missing parent directories,
/// and migrates the schema to ``StoreSchema/version``.
///
/// Rules (HealthKit's): a record whose uuid is already stored is a no-op; a record with a sync
/// identifier replaces the stored record with that identifier only when its sync version is
/// higher (a missing version counts as 0). One exception: a heartbeat series whose uuid is stored
/// with a lower sync version is a later version of a series published as it grows, and extends
/// the stored one in place.
///
/// Metadata is stored once per distinct set (``StoreSchema/canonicalEncoding(of:)``): a record
/// points to its set, and a set already seen costs no SQL.
public final class SQLiteSampleWriter {
    /// The database file.
    public let path: String
    let connection: SQLiteConnection
    // Ids of device rows and metadata sets. Both forget what a failed transaction learned (its
    // rows were rolled back) and keep what committed transactions learned (devices and sets are
    // never deleted); see RowIDCache. 4096 devices is more than a gateway serves.
    private var deviceIDs = RowIDCache<Device>(limit: 4096)
    private var metadataSets = MetadataSetInterner()
    // The last device looked up, kept apart from its id so the hot path compares in place
    // without copying the Device (three heap strings to retain and release per row). Reset when
    // a transaction fails, since it may be one that transaction inserted.
    private var lastDevice: Device?
    private var lastDeviceID: Int64 = 0
    // The longest duration stored per type. Emptied when a transaction fails: it may hold a
    // value whose upsert was rolled back, and a cleared cache only costs upserts.
    private var spans: [String: Int64] = [:]

    /// Interrupts the write running on the writer's thread, from any thread (a forced stop).
    var interruptHandle: SQLiteInterruptHandle { connection.interruptHandle }

    /// Opens (creating if needed) and migrates the store at `path`.
    /// - Parameter maximumPageCount: `PRAGMA max_page_count`, a size limit; nil for SQLite's default.
    /// - Throws: ``StoreError`` with `.ioError`, `.readOnly`, `.notAStore`, `.schemaTooNew`, …
    public init(path: String, maximumPageCount: Int? = nil) throws(StoreError) {
        self.path = path
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.ioError, path: path, message: "cannot create the directory \(directory.path): \(error)")
        }
        do {
            connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.migrate(StoreSchema.migrations)
            for row in try connection.query("SELECT type, max_duration_us FROM sample_type_spans") {
                if let type = row.text(0), let span = row.integer(1) { spans[type] = span }
            }
        } catch {
            if error.primaryCode == 1, error.message.contains("newer than this program") {
                throw StoreError(.schemaTooNew, path: path, message: error.message, sqliteCode: error.code)
            }
            throw StoreError(error, path: path)
        }
        if let maximumPageCount { try setMaximumPageCount(maximumPageCount) }
    }

    /// Sets `PRAGMA max_page_count` (the database's size limit in pages) for this connection.
    public func setMaximumPageCount(_ pages: Int) throws(StoreError) {
        do {
            try connection.execute("PRAGMA max_page_count = \(max(1, pages))")
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// Writes `records` in ONE immediate transaction.
    ///
    /// - Throws: ``StoreError``; `.diskFull` for SQLITE_FULL, `.ioError` for SQLITE_IOERR. On any
    ///   error the whole transaction is rolled back, so the call can be retried with the same
    ///   records (that is how the sink's redelivery works).
    @discardableResult
    public func write(_ records: [HealthRecord]) throws(StoreError) -> WriteSummary {
        try write(records, checkpoints: [])
    }

    /// Writes `records` and then `checkpoints` (in order; a later one with the same namespace
    /// and key replaces an earlier one) in ONE immediate transaction: a checkpoint is never
    /// stored without the records published with it, nor they without it. Errors and retries as
    /// in ``write(_:)-([HealthRecord])``.
    @discardableResult
    public func write(_ records: [HealthRecord], checkpoints: [SourceCheckpoint]) throws(StoreError) -> WriteSummary {
        do {
            let summary = try connection.transaction(.immediate) {
                let summary = try self.writeRecords(records)
                if !checkpoints.isEmpty { try self.writeCheckpoints(checkpoints) }
                return summary
            }
            deviceIDs.commit()
            metadataSets.commit()
            return summary
        } catch {
            deviceIDs.rollback()
            metadataSets.rollback()
            lastDevice = nil
            lastDeviceID = 0
            spans = [:]
            throw StoreError.wrap(error, path: path)
        }
    }

    /// Writes any collection of records in ONE transaction; see ``write(_:)-([HealthRecord])``.
    @discardableResult
    public func write(_ records: some Collection<HealthRecord>) throws(StoreError) -> WriteSummary {
        try write(Array(records))
    }

    /// Deletes the tombstones of objects deleted before `date`, in one transaction; a client
    /// whose anchor is older then gets `.anchorExpired` (see StoreSchema+Version7.swift).
    /// - Returns: how many tombstones went.
    @discardableResult
    public func purgeTombstones(deletedBefore date: Date) throws(StoreError) -> Int {
        let cutoff: [SQLiteValue] = [.integer(Self.microseconds(date))]
        do {
            return try connection.transaction(.immediate) {
                try connection.run(StoreSchema.recordPurgedAnchor, cutoff)
                return try connection.run(StoreSchema.purgeTombstones, cutoff)
            }
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }

    /// Runs `PRAGMA wal_checkpoint(TRUNCATE)`, folding the write-ahead log into the database.
    public func checkpoint() throws(StoreError) {
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

    private func writeRecords(_ records: [HealthRecord]) throws -> WriteSummary {
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
                outcome = try write(sample, using: &insert)
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
            let endMicros = Self.microseconds(end)
            if endMicros > latest { latest = endMicros }
        }
        if latest != .min { summary.lastRecordDate = Self.date(microseconds: latest) }
        return summary
    }

    /// The insert statement with a memo of the text bound to it. `sqlite3_reset` keeps bindings,
    /// so consecutive samples of one type, unit and device rebind only what changed: two fewer
    /// SQLITE_TRANSIENT copies per row.
    private struct QuantityInsert {
        let statement: SQLiteStatement
        var type: String?
        var unit: String?
        var deviceID: Int64??
    }

    private enum Outcome { case inserted, replaced, ignored }

    // MARK: Quantity samples (the hot path)

    private func write(_ sample: QuantitySample, using insert: inout QuantityInsert) throws(SQLiteError) -> Outcome {
        var replacing = false
        var syncIdentifier: String?
        var syncVersion: Int64?
        if !sample.metadata.isEmpty {
            syncIdentifier = sample.metadata.syncIdentifier
            syncVersion = sample.metadata.syncVersion
        }
        if let syncIdentifier {
            switch try resolve(table: "samples", id: sample.id, syncIdentifier: syncIdentifier,
                               version: syncVersion ?? 0) {
            case .ignore: return .ignored
            case .replace: replacing = true
            case .insert: break
            }
        }
        let deviceID = try deviceID(for: sample.device)
        let metadataSetID = try metadataSetID(for: sample.metadata)
        let start = Self.microseconds(sample.startDate)
        let end = Self.microseconds(sample.endDate)
        let statement = insert.statement
        var key = (sample.id.high.bigEndian, sample.id.low.bigEndian)
        withUnsafeBytes(of: &key) { statement.bind(bytes: $0, at: 1) }
        if insert.type != sample.type.identifier {
            statement.bind(sample.type.identifier, at: 2)
            insert.type = sample.type.identifier
        }
        let unit = sample.quantity.unit
        // Already canonical (the usual case): no conversion.
        statement.bind(unit == sample.type.canonicalUnit ? sample.quantity.value : sample.canonicalValue, at: 3)
        if insert.unit != unit.unitString {
            statement.bind(unit.unitString, at: 4)
            insert.unit = unit.unitString
        }
        statement.bind(sample.quantity.value, at: 5)
        statement.bind(start, at: 6)
        statement.bind(end, at: 7)
        if insert.deviceID != .some(deviceID) {
            if let deviceID { statement.bind(deviceID, at: 8) } else { statement.bind(nil as String?, at: 8) }
            insert.deviceID = .some(deviceID)
        }
        statement.bind(syncIdentifier, at: 9)
        if let syncVersion { statement.bind(syncVersion, at: 10) } else { statement.bind(nil as String?, at: 10) }
        if let metadataSetID { statement.bind(metadataSetID, at: 11) } else { statement.bind(nil as String?, at: 11) }
        try statement.runAndReset()
        guard connection.changes > 0 else { return .ignored }
        let duration = end - start
        if duration > 0, duration > spans[sample.type.identifier] ?? 0 {
            try connection.run(
                """
                INSERT INTO sample_type_spans (type, max_duration_us) VALUES (?1, ?2)
                ON CONFLICT (type) DO UPDATE SET max_duration_us = max(max_duration_us, excluded.max_duration_us)
                """, [.text(sample.type.identifier), .integer(duration)])
            spans[sample.type.identifier] = duration
        }
        return replacing ? .replaced : .inserted
    }

    // MARK: Heartbeat series

    private func write(_ series: HeartbeatSeriesSample) throws(SQLiteError) -> Outcome {
        if let outcome = try extend(series) { return outcome }
        let syncIdentifier = series.metadata.syncIdentifier
        let decision = try resolve(
            table: "heartbeat_series", id: series.id, syncIdentifier: syncIdentifier,
            version: series.metadata.syncVersion ?? 0)
        if decision == .ignore { return .ignored }
        let id = SQLiteValue.blob(series.id.bytes)
        try connection.run(
            """
            INSERT INTO heartbeat_series (uuid, start_us, end_us, beat_count, device_id, sync_identifier, sync_version,
                metadata_set_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """,
            [id, .integer(Self.microseconds(series.startDate)), .integer(Self.microseconds(series.endDate)),
             .integer(Int64(series.beats.count)), try deviceID(for: series.device).map(SQLiteValue.integer) ?? .null,
             syncIdentifier.map(SQLiteValue.text) ?? .null,
             series.metadata.syncVersion.map(SQLiteValue.integer) ?? .null,
             try metadataSetID(for: series.metadata).map(SQLiteValue.integer) ?? .null])
        try insertBeats(of: series, from: 0)
        try WorkoutLinks.linkSeries(
            id, start: series.startDate, end: series.endDate, device: series.device, connection: connection)
        return decision == .replace ? .replaced : .inserted
    }

    /// A series whose uuid is stored already, with a higher sync version: a series published
    /// again as it grows (metadata `healthgate.provisional`). Its row is updated in place and
    /// only the beats past those stored are written: a later version with the same start extends
    /// the earlier one (beats are only ever appended), so the stored beats are kept and each
    /// version costs what it adds. A version with another start has every beat rewritten.
    /// - Returns: nil when the uuid is not stored (the ordinary rules apply).
    private func extend(_ series: HeartbeatSeriesSample) throws(SQLiteError) -> Outcome? {
        let id = SQLiteValue.blob(series.id.bytes)
        guard let stored = try connection.query(
            "SELECT ifnull(sync_version, 0), start_us, beat_count FROM heartbeat_series WHERE uuid = ?1", [id]).first
        else { return nil }
        guard let version = series.metadata.syncVersion, version > stored.integer(0) ?? 0 else { return .ignored }
        let start = Self.microseconds(series.startDate)
        let kept = stored.integer(1) == start ? min(Int(stored.integer(2) ?? 0), series.beats.count) : 0
        try connection.run(
            """
            UPDATE heartbeat_series SET start_us = ?2, end_us = ?3, beat_count = ?4, device_id = ?5,
                sync_identifier = ?6, sync_version = ?7, metadata_set_id = ?8
            WHERE uuid = ?1
            """,
            [id, .integer(start), .integer(Self.microseconds(series.endDate)), .integer(Int64(series.beats.count)),
             try deviceID(for: series.device).map(SQLiteValue.integer) ?? .null,
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

    /// The correlation's row, its members as ordinary samples (a member stored already is
    /// kept as it is) and the links between them.
    private func write(_ correlation: CorrelationSample, using insert: inout QuantityInsert) throws(SQLiteError) -> Outcome {
        let syncIdentifier = correlation.metadata.syncIdentifier
        let decision = try resolve(
            table: "correlations", id: correlation.id, syncIdentifier: syncIdentifier,
            version: correlation.metadata.syncVersion ?? 0)
        if decision == .ignore { return .ignored }
        let id = SQLiteValue.blob(correlation.id.bytes)
        try connection.run(
            """
            INSERT INTO correlations (uuid, type, start_us, end_us, device_id, sync_identifier, sync_version,
                metadata_set_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """,
            [id, .text(correlation.type.identifier), .integer(Self.microseconds(correlation.startDate)),
             .integer(Self.microseconds(correlation.endDate)),
             try deviceID(for: correlation.device).map(SQLiteValue.integer) ?? .null,
             syncIdentifier.map(SQLiteValue.text) ?? .null,
             correlation.metadata.syncVersion.map(SQLiteValue.integer) ?? .null,
             try metadataSetID(for: correlation.metadata).map(SQLiteValue.integer) ?? .null])
        for (index, member) in correlation.objects.enumerated() {
            _ = try write(member, using: &insert)
            try connection.run(
                "INSERT INTO correlation_members (correlation_uuid, member_index, sample_uuid) VALUES (?1, ?2, ?3)",
                [id, .integer(Int64(index)), .blob(member.id.bytes)])
        }
        return decision == .replace ? .replaced : .inserted
    }

    // MARK: Workouts

    private func write(_ workout: Workout) throws(SQLiteError) -> Outcome {
        // The workout in progress becomes the stored workout in this transaction (schema
        // version 4), also when this is a copy of a workout already stored.
        try connection.run("DELETE FROM live_workouts WHERE uuid = ?1", [.blob(workout.id.bytes)])
        let syncIdentifier = workout.metadata.syncIdentifier
        let decision = try resolve(
            table: "workouts", id: workout.id, syncIdentifier: syncIdentifier,
            version: workout.metadata.syncVersion ?? 0)
        if decision == .ignore { return .ignored }
        let id = SQLiteValue.blob(workout.id.bytes)
        try connection.run(
            """
            INSERT INTO workouts (uuid, activity_type, start_us, end_us, duration, sync_identifier, sync_version,
                metadata_set_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """,
            [id, .text(workout.activityType.rawValue), .integer(Self.microseconds(workout.startDate)),
             .integer(Self.microseconds(workout.endDate)), .real(workout.duration),
             syncIdentifier.map(SQLiteValue.text) ?? .null,
             workout.metadata.syncVersion.map(SQLiteValue.integer) ?? .null,
             try metadataSetID(for: workout.metadata).map(SQLiteValue.integer) ?? .null])
        for (index, event) in workout.events.enumerated() {
            var metadataJSON = SQLiteValue.null
            if !event.metadata.isEmpty {
                do {
                    let data = try HealthJSON.makeEncoder().encode(event.metadata)
                    metadataJSON = .text(String(decoding: data, as: UTF8.self))
                } catch {
                    throw SQLiteError(code: 20, message: "workout event metadata cannot be encoded: \(error)",
                                      context: "workout \(workout.id)")
                }
            }
            try connection.run(
                """
                INSERT INTO workout_events (workout_uuid, event_index, type, start_us, end_us, metadata)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                """,
                [id, .integer(Int64(index)), .text(event.type.rawValue), .integer(Self.microseconds(event.startDate)),
                 .integer(Self.microseconds(event.endDate)), metadataJSON])
        }
        for (index, activity) in workout.activities.enumerated() {
            let activityID = SQLiteValue.blob(activity.id.bytes)
            try connection.run(
                """
                INSERT INTO workout_activities (uuid, workout_uuid, activity_index, activity_type, start_us, end_us)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING
                """,
                [activityID, id, .integer(Int64(index)), .text(activity.activityType.rawValue),
                 .integer(Self.microseconds(activity.startDate)),
                 activity.endDate.map { .integer(Self.microseconds($0)) } ?? .null])
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
            [owner, workout, .text(statistics.type.identifier), .integer(Self.microseconds(statistics.startDate)),
             .integer(Self.microseconds(statistics.endDate)), .integer(Int64(statistics.sampleCount)),
             real(statistics.sum), real(statistics.average), real(statistics.minimum), real(statistics.maximum),
             real(statistics.mostRecent), statistics.mostRecentDate.map { .integer(Self.microseconds($0)) } ?? .null])
    }

    // MARK: Shared pieces

    private enum Decision { case insert, replace, ignore }

    /// Applies the uuid and sync-version rules for a record about to be inserted into `table`,
    /// deleting the older version when the new one replaces it.
    private func resolve(
        table: String, id: SampleID, syncIdentifier: String?, version: Int64
    ) throws(SQLiteError) -> Decision {
        let key = SQLiteValue.blob(id.bytes)
        if try !connection.query("SELECT 1 FROM \(table) WHERE uuid = ?1", [key]).isEmpty { return .ignore }
        guard let syncIdentifier else { return .insert }
        guard let existing = try connection.query(
            "SELECT uuid, ifnull(sync_version, 0) FROM \(table) WHERE sync_identifier = ?1",
            [.text(syncIdentifier)]).first, let oldKey = existing.blob(0)
        else { return .insert }
        guard version > existing.integer(1) ?? 0 else { return .ignore }
        // Child rows of heartbeat_series and workouts go with ON DELETE CASCADE. The metadata set
        // stays: other records may share it, and an unused one is harmless (StoreSchema+Version2).
        if table == "correlations" {
            // The members are samples of their own; the newer version brings its own.
            try connection.run(
                "DELETE FROM samples WHERE uuid IN (SELECT sample_uuid FROM correlation_members WHERE correlation_uuid = ?1)",
                [.blob(oldKey)])
            try connection.run("DELETE FROM correlation_members WHERE correlation_uuid = ?1", [.blob(oldKey)])
        }
        if table == "workouts" {
            try connection.run(
                "DELETE FROM workout_statistics WHERE workout_uuid = ?1", [.blob(oldKey)])
        }
        try connection.run("DELETE FROM \(table) WHERE uuid = ?1", [.blob(oldKey)])
        return .replace
    }

    /// The id of the metadata set holding `metadata`'s entries, sync keys left out; nil when
    /// nothing is left (no metadata, or only the sync keys).
    private func metadataSetID(for metadata: Metadata) throws(SQLiteError) -> Int64? {
        if metadata.isEmpty { return nil }
        let entries = StoreSchema.storedEntries(of: metadata)
        if entries.isEmpty { return nil }
        return try metadataSets.id(of: entries, in: connection)
    }

    private func deviceID(for device: Device?) throws(SQLiteError) -> Int64? {
        guard let device else { return nil }
        if lastDevice == device { return lastDeviceID }
        if let id = deviceIDs[device] {
            lastDevice = device
            lastDeviceID = id
            return id
        }
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
            throw SQLiteError(code: 1, message: "the device row just inserted was not found",
                              context: device.displayName)
        }
        deviceIDs.insert(id, for: device)
        lastDevice = device
        lastDeviceID = id
        return id
    }

    /// Microseconds since 1970, the store's time representation.
    public static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// The date of a stored microsecond count.
    public static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }
}
