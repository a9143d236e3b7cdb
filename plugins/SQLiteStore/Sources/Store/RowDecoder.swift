import Foundation
import HealthModel
import SQLite

/// Turns stored rows back into model values. Every malformed row is a `.invalidData` error that
/// names the record, never a silently skipped row.
enum RowDecoder {
    static let deviceColumns = """
        d.name, d.manufacturer, d.model, d.hardware_version, d.firmware_version, d.software_version,
        d.local_identifier, d.udi_device_identifier
        """

    /// The columns ``decodeSamples(_:_:metadataReader:path:)`` reads, in its order, from
    /// samples `s` joined with devices `d`; `metadataColumn` is ``MetadataReader/column(of:)``.
    private static func sampleSelect(metadataColumn: String) -> String {
        """
        SELECT s.uuid, s.type, s.unit, s.original_value, s.start_us, s.end_us, s.sync_identifier,
            s.sync_version, \(metadataColumn), s.device_id, \(deviceColumns)
        FROM samples s LEFT JOIN devices d ON d.id = s.device_id
        """
    }

    static func samples(
        _ connection: SQLiteConnection, where condition: String, orderBy: String, _ bindings: [SQLiteValue],
        path: String
    ) throws(StoreError) -> [QuantitySample] {
        var metadataReader = try MetadataReader(connection, path: path)
        let sql = sampleSelect(metadataColumn: metadataReader.column(of: "s")) + " WHERE \(condition) ORDER BY \(orderBy)"
        let statement: SQLiteStatement
        do {
            statement = try connection.statement(sql)
            try statement.bind(bindings)
        } catch {
            throw StoreError(error, path: path)
        }
        return try decodeSamples(statement, connection, metadataReader: &metadataReader, path: path)
    }

    /// The newest sample of ?1 with its device and its metadata entries, one row per entry (one
    /// row without entries when it has none): the columns of ``sampleSelect(metadataColumn:)``,
    /// then the entry's key, value type and value. Needs metadata sets (schema version 2 on).
    /// A literal, so that the connection finds its statement by address (``SQLiteConnection/statement(literal:)``).
    private static let newestSampleSQL: StaticString = """
        SELECT s.uuid, s.type, s.unit, s.original_value, s.start_us, s.end_us, s.sync_identifier,
            s.sync_version, s.metadata_set_id, s.device_id, d.name, d.manufacturer, d.model, d.hardware_version,
            d.firmware_version, d.software_version, d.local_identifier, d.udi_device_identifier,
            e.key, e.value_type, e.value
        FROM (SELECT * FROM samples WHERE type = ?1 ORDER BY start_us DESC, uuid DESC LIMIT 1) s
        LEFT JOIN devices d ON d.id = s.device_id LEFT JOIN metadata_entries e ON e.set_id = s.metadata_set_id
        """

    /// The sample of `type` with the latest start date (ties: the greatest uuid), or nil, read
    /// by one statement: consistent in SQLite's own implicit read transaction, so the caller
    /// needs none. Only for files with metadata sets (schema version 2 on).
    static func newestSample(
        _ connection: SQLiteConnection, of type: QuantityType, path: String
    ) throws(StoreError) -> QuantitySample? {
        let statement: SQLiteStatement
        do {
            statement = try connection.statement(literal: newestSampleSQL)
        } catch {
            throw StoreError(error, path: path)
        }
        statement.bind(type.identifier, at: 1)
        do throws(StoreError) {
            guard try step(statement, path: path) else { return nil }
            var units: [String: HealthUnit] = [:]
            // The metadata entries are the rows' last columns, one entry per row: read once the
            // sample's own columns are, stepping to the statement's end.
            return try decodeSample(statement, units: &units, path: path) { identifier, version, _ throws(StoreError) in
                var entries = Metadata()
                repeat {
                    guard let name = statement.text(18) else { continue }
                    guard let value = StoreSchema.metadataValue(valueType: statement.text(19), value: statement.value(20))
                    else {
                        throw StoreError(.invalidData, path: path, message: "metadata \(name) has an invalid value")
                    }
                    entries[MetadataKey(name)] = value
                } while try step(statement, path: path)
                return withSyncKeys(entries, identifier, version)
            }
        } catch {
            statement.reset()
            throw error
        }
    }

    /// Steps `statement` (bound, selecting ``sampleSelect(metadataColumn:)``) to its end and
    /// decodes each row straight from the statement's columns.
    private static func decodeSamples(
        _ statement: SQLiteStatement, _ connection: SQLiteConnection, metadataReader: inout MetadataReader,
        path: String
    ) throws(StoreError) -> [QuantitySample] {
        var samples: [QuantitySample] = []
        var units: [String: HealthUnit] = [:]
        // A row that fails to decode leaves the statement mid-way: reset it, so that it does
        // not keep reading.
        do throws(StoreError) {
            while try step(statement, path: path) {
                samples.append(try decodeSample(statement, units: &units, path: path) {
                    identifier, version, key throws(StoreError) in
                    withSyncKeys(try metadataReader.metadata(key, connection), identifier, version)
                })
            }
        } catch {
            statement.reset()
            throw error
        }
        return samples
    }

    /// The sample in the statement's current row (columns of ``sampleSelect(metadataColumn:)``)
    /// with its device, and the metadata `metadata` gives for the sync keys of the row's own
    /// columns and the key of its metadata (for ``MetadataReader/metadata(_:_:)``). The sample is
    /// built once, with its metadata: a sample is a large value, and each copy of it retains
    /// every string it holds (callgrind counted about 600 instructions per copy).
    ///
    /// Parsing a unit string costs more than the rest of a row together (the newest sample took
    /// 2.3 times as long with a parse per row), so `units` keeps each distinct unit of a query,
    /// and the type's canonical unit, which most samples are recorded in, is never parsed.
    private static func decodeSample(
        _ statement: SQLiteStatement, units: inout [String: HealthUnit], path: String,
        metadata: (_ syncIdentifier: String?, _ syncVersion: Int64?, _ key: SQLiteValue) throws(StoreError) -> Metadata
    ) throws(StoreError) -> QuantitySample {
        // The two big-endian halves straight from the blob, without copying it into an array.
        let key = statement.withBlob(0) { bytes in
            bytes.count == 16
                ? SampleID(high: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                           low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                : nil
        }
        guard let id = key ?? nil else {
            throw StoreError(.invalidData, path: path, message: "a stored uuid is not 16 bytes")
        }
        let typeName = statement.text(1)
        guard let typeName, let type = QuantityType.named(typeName) else {
            throw StoreError(.invalidData, path: path, message: "sample \(id) has an unknown type \(typeName ?? "NULL")")
        }
        let unitString = statement.text(2) ?? ""
        let unit: HealthUnit
        if unitString == type.canonicalUnit.unitString {
            unit = type.canonicalUnit
        } else if let known = units[unitString] {
            unit = known
        } else {
            do {
                unit = try HealthUnit(unitString)
            } catch {
                throw StoreError(.invalidData, path: path, message: "sample \(id) has an invalid unit: \(error)")
            }
            units[unitString] = unit
        }
        guard let value = statement.double(3), let start = statement.integer(4), let end = statement.integer(5) else {
            throw StoreError(.invalidData, path: path, message: "sample \(id) lacks a value or a date")
        }
        let device = statement.integer(9) == nil ? nil : Device(
            name: statement.text(10), manufacturer: statement.text(11), model: statement.text(12),
            hardwareVersion: statement.text(13), firmwareVersion: statement.text(14),
            softwareVersion: statement.text(15), localIdentifier: statement.text(16),
            udiDeviceIdentifier: statement.text(17))
        let entries = try metadata(statement.text(6), statement.integer(7), statement.value(8))
        do {
            return try QuantitySample(
                id: id, type: type, quantity: Quantity(value, unit),
                start: SQLiteSampleWriter.date(microseconds: start), end: SQLiteSampleWriter.date(microseconds: end),
                device: device, metadata: entries)
        } catch {
            throw StoreError(.invalidData, path: path, message: "sample \(id): \(error)")
        }
    }

    /// A record's metadata: its stored `entries` with the sync keys of its own columns, which win.
    private static func withSyncKeys(_ entries: Metadata, _ identifier: String?, _ version: Int64?) -> Metadata {
        // Most records have neither: clearing keys that are not there would hash them for nothing.
        if entries.isEmpty && identifier == nil && version == nil { return entries }
        var metadata = entries
        metadata.syncIdentifier = identifier
        metadata.syncVersion = version
        return metadata
    }

    private static func step(_ statement: SQLiteStatement, path: String) throws(StoreError) -> Bool {
        do {
            return try statement.step()
        } catch {
            throw StoreError(error, path: path)
        }
    }

    static func heartbeatSeries(
        _ connection: SQLiteConnection, where condition: String, _ bindings: [SQLiteValue], path: String
    ) throws(StoreError) -> [HeartbeatSeriesSample] {
        var metadataReader = try MetadataReader(connection, path: path)
        let rows = try SQLiteSampleStore.run(
            connection,
            """
            SELECT h.uuid, h.start_us, h.end_us, h.sync_identifier, h.sync_version, \(metadataReader.column(of: "h")),
                h.device_id, \(deviceColumns)
            FROM heartbeat_series h LEFT JOIN devices d ON d.id = h.device_id
            WHERE \(condition) ORDER BY h.start_us, h.uuid
            """, bindings, path: path)
        var result: [HeartbeatSeriesSample] = []
        for row in rows {
            let id = try sampleID(row, 0, path: path)
            guard let start = row.integer(1), let end = row.integer(2) else {
                throw StoreError(.invalidData, path: path, message: "heartbeat series \(id) lacks a date")
            }
            let beats = try SQLiteSampleStore.run(
                connection,
                "SELECT time_since_start, preceded_by_gap FROM heartbeats WHERE series_uuid = ?1 ORDER BY beat_index",
                [row.values[0]], path: path
            ).map { Heartbeat(timeSinceSeriesStart: $0.double(0) ?? 0, precededByGap: ($0.integer(1) ?? 0) != 0) }
            var metadata = try metadataReader.metadata(row.values[5], connection)
            metadata.syncIdentifier = row.text(3)
            metadata.syncVersion = row.integer(4)
            do {
                result.append(try HeartbeatSeriesSample(
                    id: id, start: SQLiteSampleWriter.date(microseconds: start),
                    end: SQLiteSampleWriter.date(microseconds: end), beats: beats, device: device(row, idColumn: 6),
                    metadata: metadata))
            } catch {
                throw StoreError(.invalidData, path: path, message: "heartbeat series \(id): \(error)")
            }
        }
        return result
    }

    static func correlations(
        _ connection: SQLiteConnection, where condition: String, _ bindings: [SQLiteValue], path: String
    ) throws(StoreError) -> [CorrelationSample] {
        var metadataReader = try MetadataReader(connection, path: path)
        let rows = try SQLiteSampleStore.run(
            connection,
            """
            SELECT c.uuid, c.type, c.start_us, c.end_us, c.sync_identifier, c.sync_version,
                \(metadataReader.column(of: "c")), c.device_id, \(deviceColumns)
            FROM correlations c LEFT JOIN devices d ON d.id = c.device_id
            WHERE \(condition) ORDER BY c.start_us, c.uuid
            """, bindings, path: path)
        var result: [CorrelationSample] = []
        for row in rows {
            let id = try sampleID(row, 0, path: path)
            guard let typeName = row.text(1), let type = CorrelationType.named(typeName) else {
                throw StoreError(
                    .invalidData, path: path, message: "correlation \(id) has an unknown type \(row.text(1) ?? "NULL")")
            }
            guard let start = row.integer(2), let end = row.integer(3) else {
                throw StoreError(.invalidData, path: path, message: "correlation \(id) lacks a date")
            }
            let members = try samples(
                connection,
                where: "s.uuid IN (SELECT sample_uuid FROM correlation_members WHERE correlation_uuid = ?1)",
                orderBy: "s.uuid", [row.values[0]], path: path)
            var metadata = try metadataReader.metadata(row.values[6], connection)
            metadata.syncIdentifier = row.text(4)
            metadata.syncVersion = row.integer(5)
            do {
                result.append(try CorrelationSample(
                    id: id, type: type, start: SQLiteSampleWriter.date(microseconds: start),
                    end: SQLiteSampleWriter.date(microseconds: end), objects: members, device: device(row, idColumn: 7),
                    metadata: metadata))
            } catch {
                throw StoreError(.invalidData, path: path, message: "correlation \(id): \(error)")
            }
        }
        return result
    }

    static func workouts(
        _ connection: SQLiteConnection, where condition: String, _ bindings: [SQLiteValue], path: String
    ) throws(StoreError) -> [Workout] {
        var metadataReader = try MetadataReader(connection, path: path)
        let rows = try SQLiteSampleStore.run(
            connection,
            """
            SELECT uuid, activity_type, start_us, end_us, duration, sync_identifier, sync_version,
                \(metadataReader.column(of: "workouts"))
            FROM workouts WHERE \(condition) ORDER BY start_us, uuid
            """, bindings, path: path)
        var result: [Workout] = []
        for row in rows {
            let id = try sampleID(row, 0, path: path)
            let key = row.values[0]
            guard let activityName = row.text(1), let activityType = WorkoutActivityType(rawValue: activityName),
                let start = row.integer(2), let end = row.integer(3), let duration = row.double(4)
            else {
                throw StoreError(.invalidData, path: path, message: "workout \(id) has an invalid row")
            }
            var events: [WorkoutEvent] = []
            for event in try SQLiteSampleStore.run(
                connection,
                "SELECT type, start_us, end_us, metadata FROM workout_events WHERE workout_uuid = ?1 ORDER BY event_index",
                [key], path: path)
            {
                guard let type = event.text(0).flatMap(WorkoutEventType.init(rawValue:)),
                    let eventStart = event.integer(1), let eventEnd = event.integer(2)
                else { throw StoreError(.invalidData, path: path, message: "workout \(id) has an invalid event") }
                var metadata = Metadata()
                if let json = event.text(3) {
                    do {
                        metadata = try HealthJSON.makeDecoder().decode(Metadata.self, from: Data(json.utf8))
                    } catch {
                        throw StoreError(.invalidData, path: path, message: "workout \(id) event metadata: \(error)")
                    }
                }
                events.append(WorkoutEvent(
                    type: type, startDate: SQLiteSampleWriter.date(microseconds: eventStart),
                    endDate: SQLiteSampleWriter.date(microseconds: eventEnd), metadata: metadata))
            }
            let statistics = try self.statistics(connection, owner: key, path: path)
            var activities: [WorkoutActivity] = []
            for activity in try SQLiteSampleStore.run(
                connection,
                """
                SELECT uuid, activity_type, start_us, end_us FROM workout_activities
                WHERE workout_uuid = ?1 ORDER BY activity_index
                """, [key], path: path)
            {
                let activityID = try sampleID(activity, 0, path: path)
                guard let type = activity.text(1).flatMap(WorkoutActivityType.init(rawValue:)),
                    let activityStart = activity.integer(2)
                else { throw StoreError(.invalidData, path: path, message: "workout \(id) has an invalid activity") }
                activities.append(WorkoutActivity(
                    id: activityID, activityType: type, startDate: SQLiteSampleWriter.date(microseconds: activityStart),
                    endDate: activity.integer(3).map(SQLiteSampleWriter.date(microseconds:)),
                    statistics: try self.statistics(connection, owner: activity.values[0], path: path)))
            }
            let sampleIDs = try SQLiteSampleStore.run(
                connection, "SELECT sample_uuid FROM workout_samples WHERE workout_uuid = ?1 ORDER BY sample_uuid",
                [key], path: path
            ).map { sampleRow throws(StoreError) in try sampleID(sampleRow, 0, path: path) }
            var metadata = try metadataReader.metadata(row.values[7], connection)
            metadata.syncIdentifier = row.text(5)
            metadata.syncVersion = row.integer(6)
            result.append(Workout(
                id: id, activityType: activityType, startDate: SQLiteSampleWriter.date(microseconds: start),
                endDate: SQLiteSampleWriter.date(microseconds: end), duration: duration, events: events,
                activities: activities, statistics: statistics, metadata: metadata, sampleIDs: sampleIDs))
        }
        return result
    }

    private static func statistics(
        _ connection: SQLiteConnection, owner: SQLiteValue, path: String
    ) throws(StoreError) -> [QuantityStatistics] {
        var result: [QuantityStatistics] = []
        for row in try SQLiteSampleStore.run(
            connection,
            """
            SELECT type, start_us, end_us, sample_count, sum, average, minimum, maximum, most_recent, most_recent_us
            FROM workout_statistics WHERE owner_uuid = ?1 ORDER BY type
            """, [owner], path: path)
        {
            guard let type = row.text(0).flatMap(QuantityType.named), let start = row.integer(1),
                let end = row.integer(2), let count = row.integer(3)
            else { throw StoreError(.invalidData, path: path, message: "invalid workout statistics row") }
            result.append(QuantityStatistics(
                type: type, startDate: SQLiteSampleWriter.date(microseconds: start),
                endDate: SQLiteSampleWriter.date(microseconds: end), sampleCount: Int(count), sum: row.double(4),
                average: row.double(5), minimum: row.double(6), maximum: row.double(7), mostRecent: row.double(8),
                mostRecentDate: row.integer(9).map(SQLiteSampleWriter.date(microseconds:))))
        }
        return result
    }

    static func sampleID(_ row: SQLiteRow, _ column: Int, path: String) throws(StoreError) -> SampleID {
        guard let bytes = row.blob(column), let id = SampleID(bytes: bytes) else {
            throw StoreError(.invalidData, path: path, message: "a stored uuid is not 16 bytes")
        }
        return id
    }

    private static func device(_ row: SQLiteRow, idColumn: Int) -> Device? {
        guard row.integer(idColumn) != nil else { return nil }
        let c = idColumn + 1
        return Device(
            name: row.text(c), manufacturer: row.text(c + 1), model: row.text(c + 2), hardwareVersion: row.text(c + 3),
            firmwareVersion: row.text(c + 4), softwareVersion: row.text(c + 5), localIdentifier: row.text(c + 6),
            udiDeviceIdentifier: row.text(c + 7))
    }
}
