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

    static func samples(
        _ connection: SQLiteConnection, where condition: String, orderBy: String, _ bindings: [SQLiteValue],
        path: String
    ) throws(StoreError) -> [QuantitySample] {
        var metadataReader = try MetadataReader(connection, path: path)
        let rows = try SQLiteSampleStore.run(
            connection,
            """
            SELECT s.uuid, s.type, s.unit, s.original_value, s.start_us, s.end_us, s.sync_identifier,
                s.sync_version, \(metadataReader.column(of: "s")), s.device_id, \(deviceColumns)
            FROM samples s LEFT JOIN devices d ON d.id = s.device_id
            WHERE \(condition) ORDER BY \(orderBy)
            """, bindings, path: path)
        var samples: [QuantitySample] = []
        samples.reserveCapacity(rows.count)
        // Parsing a unit string costs more than the rest of a row together (the newest sample
        // took 2.3 times as long with a parse per row), so each distinct unit is parsed once per
        // query, and the type's canonical unit, which most samples are recorded in, not at all.
        var units: [String: HealthUnit] = [:]
        for row in rows {
            let id = try sampleID(row, 0, path: path)
            guard let typeName = row.text(1), let type = QuantityType.named(typeName) else {
                throw StoreError(.invalidData, path: path, message: "sample \(id) has an unknown type \(row.text(1) ?? "NULL")")
            }
            let unitString = row.text(2) ?? ""
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
            guard let value = row.double(3), let start = row.integer(4), let end = row.integer(5) else {
                throw StoreError(.invalidData, path: path, message: "sample \(id) lacks a value or a date")
            }
            var metadata = try metadataReader.metadata(row.values[8], connection)
            metadata.syncIdentifier = row.text(6)
            metadata.syncVersion = row.integer(7)
            do {
                samples.append(try QuantitySample(
                    id: id, type: type, quantity: Quantity(value, unit),
                    start: SQLiteSampleWriter.date(microseconds: start), end: SQLiteSampleWriter.date(microseconds: end),
                    device: device(row, idColumn: 9), metadata: metadata))
            } catch {
                throw StoreError(.invalidData, path: path, message: "sample \(id): \(error)")
            }
        }
        return samples
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
