import FoundationEssentials
import HealthModel
import SQLite

/// Turns stored rows back into model values. Every malformed row is a `.invalidData` error that
/// names the record, never a silently skipped row.
enum RowDecoder {
    static let deviceColumns = """
        d.name, d.manufacturer, d.model, d.hardware_version, d.firmware_version, d.software_version,
        d.local_identifier, d.udi_device_identifier, d.radio_identifier
        """

    /// The columns ``decodeSample(_:vocabulary:path:syncColumn:metadata:)`` reads, in its order,
    /// from samples `s` with their sync keys `y` (columns ``sampleSyncColumn`` and the next).
    /// The device is its id: a scan meets a few devices, each read once
    /// (``device(_:vocabulary:)``), where a join made SQLite look each row's device up.
    static let sampleSelect = """
        SELECT s.anchor, s.uuid, s.type_id, s.unit_id, s.value, s.original_value, s.start_us, s.duration_us,
            s.metadata_set_id, s.device_id, y.sync_identifier, y.sync_version
        FROM samples s LEFT JOIN sample_sync y ON y.anchor = s.anchor
        """

    /// The column of ``sampleSelect`` that holds the sample's sync identifier (its version next).
    static let sampleSyncColumn: Int32 = 10

    /// The samples `condition` selects, in `orderBy`'s order.
    static func samples(
        _ connection: SQLiteConnection, where condition: String, orderBy: String, _ bindings: [SQLiteValue],
        path: String
    ) throws(StoreError) -> [QuantitySample] {
        var samples: [QuantitySample] = []
        try forEachSample(connection, where: condition, orderBy: orderBy, bindings, path: path) { _, sample in
            samples.append(sample)
        }
        return samples
    }

    /// Hands each sample `condition` selects, with its anchor, to `body` as it is decoded.
    static func forEachSample(
        _ connection: SQLiteConnection, where condition: String, orderBy: String, _ bindings: [SQLiteValue],
        path: String, _ body: (_ anchor: Int64, _ sample: QuantitySample) throws(StoreError) -> Void
    ) throws(StoreError) {
        try forEachRow(
            connection, sampleSelect + " WHERE \(condition) ORDER BY \(orderBy)", bindings, path: path
        ) { statement, vocabulary, metadataReader throws(StoreError) in
            let anchor = statement.integer(0) ?? 0
            try body(anchor, try decodeSample(statement, vocabulary: &vocabulary, path: path, syncColumn: sampleSyncColumn) { key throws(StoreError) in
                try metadataReader.metadata(key, connection)
            })
        }
    }

    /// Runs `sql` with `bindings` and hands each row (the statement on it) to `body`, with the
    /// vocabulary and metadata reader the rows of one query share.
    static func forEachRow(
        _ connection: SQLiteConnection, _ sql: String, _ bindings: [SQLiteValue], path: String,
        _ body: (
            _ statement: SQLiteStatement, _ vocabulary: inout StoreVocabulary, _ metadataReader: inout MetadataReader
        ) throws(StoreError) -> Void
    ) throws(StoreError) {
        var metadataReader = MetadataReader(path: path)
        var vocabulary = StoreVocabulary(connection: connection, path: path)
        let statement: SQLiteStatement
        do {
            statement = try connection.statement(sql)
            try statement.bind(bindings)
        } catch {
            throw StoreError(error, path: path)
        }
        // A row that fails to decode leaves the statement mid-way: reset it, so that it does
        // not keep reading.
        do throws(StoreError) {
            while try step(statement, path: path) {
                try body(statement, &vocabulary, &metadataReader)
            }
        } catch {
            statement.reset()
            throw error
        }
    }

    /// Every row of `devices` with its id, each made into the ``Device`` the sample readers make
    /// of it (``decodeSample(_:vocabulary:path:metadata:)``, ``device(_:idColumn:)``): what a
    /// selection of devices is matched against before the samples are read by `device_id`.
    static func storedDevices(_ connection: SQLiteConnection, path: String) throws(StoreError) -> [(id: Int64, device: Device)] {
        try HealthStore.run(connection, "SELECT d.id, \(deviceColumns) FROM devices d ORDER BY d.id", [], path: path)
            .compactMap { row in
                guard let id = row.integer(0), let device = device(row, idColumn: 0) else { return nil }
                return (id, device)
            }
    }

    /// The newest sample of ?1 (a type id) with its device, its unit and its metadata entries
    /// (its set's, its parent's and grandparent's: ``StoreSchema/entriesOfSet(_:)`` written out),
    /// one row per entry (one row without entries when it has none): the columns of
    /// ``sampleSelect`` up to the device id, the device's fields (10 to 18: one row, so no
    /// lookup by id), then the entry's key, value type and value, the unit string, and the
    /// sample's sync keys.
    /// A literal, so that the connection finds its statement by address (``SQLiteConnection/statement(literal:)``).
    private static let newestSampleSQL: StaticString = """
        SELECT s.anchor, s.uuid, s.type_id, s.unit_id, s.value, s.original_value, s.start_us, s.duration_us,
            s.metadata_set_id, s.device_id, d.name, d.manufacturer, d.model,
            d.hardware_version, d.firmware_version, d.software_version, d.local_identifier, d.udi_device_identifier,
            d.radio_identifier, e.key, e.value_type, e.value, u.unit, y.sync_identifier, y.sync_version
        FROM (SELECT * FROM samples WHERE type_id = (SELECT id FROM quantity_types WHERE identifier = ?1)
            ORDER BY start_us DESC, uuid DESC LIMIT 1) s
        JOIN units u ON u.id = s.unit_id
        LEFT JOIN devices d ON d.id = s.device_id
        LEFT JOIN sample_sync y ON y.anchor = s.anchor
        LEFT JOIN metadata_entries e
            ON e.set_id IN (s.metadata_set_id, (SELECT parent_id FROM metadata_sets WHERE id = s.metadata_set_id),
                (SELECT p.parent_id FROM metadata_sets c JOIN metadata_sets p ON p.id = c.parent_id WHERE c.id = s.metadata_set_id))
        """

    /// The sample of `type` with the latest start date (ties: the greatest uuid), or nil, read
    /// by one statement: consistent in SQLite's own implicit read transaction, so the caller
    /// needs none.
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
            // The type is the one asked for and the unit is in the row: no vocabulary lookup.
            var vocabulary = StoreVocabulary(known: type, unit: statement.text(22), path: path)
            // The metadata entries are the rows' last columns, one entry per row: read once the
            // sample's own columns are, stepping to the statement's end.
            return try decodeSample(statement, vocabulary: &vocabulary, path: path, syncColumn: 23) { _ throws(StoreError) in
                var entries = Metadata()
                repeat {
                    guard let name = statement.text(19) else { continue }
                    guard let value = StoreSchema.metadataValue(valueType: statement.text(20), value: statement.value(21))
                    else {
                        throw StoreError(.invalidData, path: path, message: "metadata \(name) has an invalid value")
                    }
                    entries[MetadataKey(name)] = value
                } while try step(statement, path: path)
                return entries
            }
        } catch {
            statement.reset()
            throw error
        }
    }

    /// The sample in the statement's current row (columns of ``sampleSelect``) with its device,
    /// and the metadata `metadata` gives for the key of its metadata set, with the sync keys of
    /// its `sample_sync` row (columns `syncColumn` and `syncColumn + 1`) when the set does not
    /// hold them (version 17; a set stored before holds them). The sample is built once, with
    /// its metadata: a sample is a large value, and each copy retains every string it holds.
    static func decodeSample(
        _ statement: SQLiteStatement, vocabulary: inout StoreVocabulary, path: String, syncColumn: Int32,
        metadata: (_ key: SQLiteValue) throws(StoreError) -> Metadata
    ) throws(StoreError) -> QuantitySample {
        // The two big-endian halves straight from the blob, without copying it into an array.
        let key = statement.withBlob(1) { bytes in
            bytes.count == 16
                ? SampleID(high: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                           low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                : nil
        }
        guard let id = key ?? nil else {
            throw StoreError(.invalidData, path: path, message: "a stored uuid is not 16 bytes")
        }
        guard let typeID = statement.integer(2), let unitID = statement.integer(3), let value = statement.double(4),
            let start = statement.integer(6), let duration = statement.integer(7)
        else {
            throw StoreError(.invalidData, path: path, message: "sample \(id) lacks a type, unit, value or date")
        }
        let type = try vocabulary.type(typeID, for: id)
        let unit = try vocabulary.unit(unitID, of: type, for: id)
        // No original value: the value was recorded as it is stored.
        let original = statement.double(5) ?? value
        let device = try Self.device(statement, vocabulary: &vocabulary)
        // Read before `metadata`, which may step the statement past this row.
        let syncIdentifier = statement.text(syncColumn)
        let syncVersion = statement.integer(syncColumn + 1)
        var entries = try metadata(statement.value(8))
        if let syncIdentifier, entries.syncIdentifier == nil {
            entries.syncIdentifier = syncIdentifier
            entries.syncVersion = syncVersion
        }
        return try decoded("sample \(id)", path: path) {
            try QuantitySample(
                id: id, type: type, quantity: Quantity(original, unit),
                start: StoreTime.date(microseconds: start), end: StoreTime.date(microseconds: start &+ duration),
                device: device, metadata: entries)
        }
    }

    /// A correlation's, heartbeat series' or workout's metadata: its stored `entries` with the
    /// sync keys of its own columns, which win.
    static func withSyncKeys(_ entries: Metadata, _ identifier: String?, _ version: Int64?) -> Metadata {
        // Most records have neither: clearing keys that are not there would hash them for nothing.
        if entries.isEmpty && identifier == nil && version == nil { return entries }
        var metadata = entries
        // Room for both keys at once: growing an empty dictionary key by key resized it each time.
        metadata.reserveCapacity(entries.count + 2)
        metadata.syncIdentifier = identifier
        metadata.syncVersion = version
        return metadata
    }

    /// The device of the statement's current row (its id in column 9) through `vocabulary`'s
    /// cache: the first time the query meets it, read by its id (``sampleSelect``,
    /// ``seriesSelect``), or from the row's columns 10 to 18 for a vocabulary of one known row
    /// (the newest sample, whose statement selects them); nil for a row without one.
    static func device(_ statement: SQLiteStatement, vocabulary: inout StoreVocabulary) throws(StoreError) -> Device? {
        guard let deviceID = statement.integer(9) else { return nil }
        return try vocabulary.device(deviceID) {
            Device(
                name: statement.text(10), manufacturer: statement.text(11), model: statement.text(12),
                hardwareVersion: statement.text(13), firmwareVersion: statement.text(14),
                softwareVersion: statement.text(15), localIdentifier: statement.text(16),
                udiDeviceIdentifier: statement.text(17), radioIdentifier: statement.text(18))
        }
    }

    static func step(_ statement: SQLiteStatement, path: String) throws(StoreError) -> Bool {
        do {
            return try statement.step()
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// The heartbeat series `condition` selects (on `heartbeat_series h`), by start date, each
    /// with its anchor and beats.
    static func heartbeatSeries(
        _ connection: SQLiteConnection, where condition: String, _ bindings: [SQLiteValue], path: String
    ) throws(StoreError) -> [(anchor: Int64, series: HeartbeatSeriesSample)] {
        var metadataReader = MetadataReader(path: path)
        let rows = try HealthStore.run(
            connection,
            """
            SELECT h.uuid, h.start_us, h.end_us, h.sync_identifier, h.sync_version, h.metadata_set_id,
                h.device_id, \(deviceColumns), h.anchor, h.beats
            FROM heartbeat_series h LEFT JOIN devices d ON d.id = h.device_id
            WHERE \(condition) ORDER BY h.start_us, h.uuid
            """, bindings, path: path)
        var result: [(anchor: Int64, series: HeartbeatSeriesSample)] = []
        for row in rows {
            let id = try sampleID(row, 0, path: path)
            guard let start = row.integer(1), let end = row.integer(2), let anchor = row.integer(16) else {
                throw StoreError(.invalidData, path: path, message: "heartbeat series \(id) lacks a date")
            }
            let beats: [Heartbeat]
            if let bytes = row.blob(17) {
                beats = try decoded("heartbeat series \(id)", path: path) { try HeartbeatEncoding.decode(bytes) }
            } else {
                // Stored before version 15 and not moved into its blob yet (StoreMigration).
                beats = try HealthStore.run(
                    connection,
                    "SELECT time_since_start, preceded_by_gap FROM heartbeats WHERE series_uuid = ?1 ORDER BY beat_index",
                    [row.values[0]], path: path
                ).map { Heartbeat(timeSinceSeriesStart: $0.double(0) ?? 0, precededByGap: ($0.integer(1) ?? 0) != 0) }
            }
            let metadata = withSyncKeys(try metadataReader.metadata(row.values[5], connection), row.text(3), row.integer(4))
            result.append((anchor, try decoded("heartbeat series \(id)", path: path) {
                try HeartbeatSeriesSample(
                    id: id, start: StoreTime.date(microseconds: start),
                    end: StoreTime.date(microseconds: end), beats: beats, device: device(row, idColumn: 6),
                    metadata: metadata)
            }))
        }
        return result
    }

    /// The correlations `condition` selects (on `correlations c`), by start date, each with its
    /// anchor and its member samples.
    static func correlations(
        _ connection: SQLiteConnection, where condition: String, _ bindings: [SQLiteValue], path: String
    ) throws(StoreError) -> [(anchor: Int64, correlation: CorrelationSample)] {
        var metadataReader = MetadataReader(path: path)
        let rows = try HealthStore.run(
            connection,
            """
            SELECT c.uuid, c.type, c.start_us, c.end_us, c.sync_identifier, c.sync_version, c.metadata_set_id,
                c.device_id, \(deviceColumns), c.anchor
            FROM correlations c LEFT JOIN devices d ON d.id = c.device_id
            WHERE \(condition) ORDER BY c.start_us, c.uuid
            """, bindings, path: path)
        var result: [(anchor: Int64, correlation: CorrelationSample)] = []
        for row in rows {
            let id = try sampleID(row, 0, path: path)
            guard let typeName = row.text(1), let type = CorrelationType.named(typeName) else {
                throw StoreError(
                    .invalidData, path: path, message: "correlation \(id) has an unknown type \(row.text(1) ?? "NULL")")
            }
            guard let start = row.integer(2), let end = row.integer(3), let anchor = row.integer(17) else {
                throw StoreError(.invalidData, path: path, message: "correlation \(id) lacks a date")
            }
            let members = try samples(
                connection,
                where: "s.anchor IN (SELECT sample_anchor FROM correlation_members WHERE correlation_uuid = ?1)",
                orderBy: "s.anchor", [row.values[0]], path: path)
            let metadata = withSyncKeys(try metadataReader.metadata(row.values[6], connection), row.text(4), row.integer(5))
            result.append((anchor, try decoded("correlation \(id)", path: path) {
                try CorrelationSample(
                    id: id, type: type, start: StoreTime.date(microseconds: start),
                    end: StoreTime.date(microseconds: end), objects: members, device: device(row, idColumn: 7),
                    metadata: metadata)
            }))
        }
        return result
    }

    /// The workouts `condition` selects (on `workouts`), by start date, each with its anchor,
    /// events, activities and statistics.
    static func workouts(
        _ connection: SQLiteConnection, where condition: String, _ bindings: [SQLiteValue], path: String
    ) throws(StoreError) -> [(anchor: Int64, workout: Workout)] {
        var metadataReader = MetadataReader(path: path)
        let rows = try HealthStore.run(
            connection,
            """
            SELECT uuid, activity_type, start_us, end_us, duration, sync_identifier, sync_version, metadata_set_id, anchor
            FROM workouts WHERE \(condition) ORDER BY start_us, uuid
            """, bindings, path: path)
        var result: [(anchor: Int64, workout: Workout)] = []
        for row in rows {
            let id = try sampleID(row, 0, path: path)
            let key = row.values[0]
            guard let activityName = row.text(1), let activityType = WorkoutActivityType(rawValue: activityName),
                let start = row.integer(2), let end = row.integer(3), let duration = row.double(4), let anchor = row.integer(8)
            else {
                throw StoreError(.invalidData, path: path, message: "workout \(id) has an invalid row")
            }
            var events: [WorkoutEvent] = []
            for event in try HealthStore.run(
                connection,
                "SELECT type, start_us, end_us, metadata FROM workout_events WHERE workout_uuid = ?1 ORDER BY event_index",
                [key], path: path)
            {
                guard let type = event.text(0).flatMap(WorkoutEventType.init(rawValue:)),
                    let eventStart = event.integer(1), let eventEnd = event.integer(2)
                else { throw StoreError(.invalidData, path: path, message: "workout \(id) has an invalid event") }
                var metadata = Metadata()
                if let json = event.text(3) {
                    metadata = try decoded("workout \(id) event metadata", path: path) {
                        try HealthJSON.makeDecoder().decode(Metadata.self, from: Data(json.utf8))
                    }
                }
                events.append(WorkoutEvent(
                    type: type, startDate: StoreTime.date(microseconds: eventStart),
                    endDate: StoreTime.date(microseconds: eventEnd), metadata: metadata))
            }
            let statistics = try self.statistics(connection, owner: key, path: path)
            var activities: [WorkoutActivity] = []
            for activity in try HealthStore.run(
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
                    id: activityID, activityType: type, startDate: StoreTime.date(microseconds: activityStart),
                    endDate: activity.integer(3).map(StoreTime.date(microseconds:)),
                    statistics: try self.statistics(connection, owner: activity.values[0], path: path)))
            }
            let metadata = withSyncKeys(try metadataReader.metadata(row.values[7], connection), row.text(5), row.integer(6))
            result.append((anchor, Workout(
                id: id, activityType: activityType, startDate: StoreTime.date(microseconds: start),
                endDate: StoreTime.date(microseconds: end), duration: duration, events: events,
                activities: activities, statistics: statistics, metadata: metadata)))
        }
        return result
    }

    private static func statistics(
        _ connection: SQLiteConnection, owner: SQLiteValue, path: String
    ) throws(StoreError) -> [QuantityStatistics] {
        var result: [QuantityStatistics] = []
        for row in try HealthStore.run(
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
                type: type, startDate: StoreTime.date(microseconds: start),
                endDate: StoreTime.date(microseconds: end), sampleCount: Int(count), sum: row.double(4),
                average: row.double(5), minimum: row.double(6), maximum: row.double(7), mostRecent: row.double(8),
                mostRecentDate: row.integer(9).map(StoreTime.date(microseconds:))))
        }
        return result
    }

    /// What `make` returns; what it throws becomes a `.invalidData` ``StoreError`` whose
    /// message names `what` (the stored value that did not decode) and the error.
    private static func decoded<Value>(
        _ what: @autoclosure () -> String, path: String, _ make: () throws -> Value
    ) throws(StoreError) -> Value {
        do {
            return try make()
        } catch {
            throw StoreError(.invalidData, path: path, message: "\(what()): \(error)")
        }
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
            udiDeviceIdentifier: row.text(c + 7), radioIdentifier: row.text(c + 8))
    }
}
