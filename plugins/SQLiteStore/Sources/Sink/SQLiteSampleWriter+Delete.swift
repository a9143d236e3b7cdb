public import HealthModel
import SQLite

extension SQLiteSampleWriter {
    /// Deletes the objects `selection` names, in ONE immediate transaction; the change log
    /// records a tombstone for each (StoreSchema+Version7.swift).
    ///
    /// Refused, deleting nothing, when a selected sample or heartbeat series is collected by a
    /// workout in progress (`live_workouts`: its type, one of its devices, ending after the
    /// workout started): the workout reads its samples back from the store when it ends. A
    /// workout's links (`workout_samples`) stay: a deleted sample is then listed in the
    /// workout's `sampleIDs` but absent, as one not stored yet is.
    /// - Returns: the uuids and kinds deleted, by uuid; empty when nothing matched a device or
    ///   type range.
    /// - Throws: ``StoreError`` `.invalidArgument` for an unknown uuid or an empty range,
    ///   `.inUse` for a sample of a running workout, or the SQLite failure.
    public func delete(_ selection: DeletionSelection) throws(StoreError) -> [(id: SampleID, kind: HealthRecordKind)] {
        if case .device(_, let from, let to) = selection, to <= from { throw emptyRange }
        if case .type(_, let from, let to) = selection, to <= from { throw emptyRange }
        do {
            return try connection.transaction(.immediate) { () throws -> [(id: SampleID, kind: HealthRecordKind)] in
                try connection.execute("""
                    CREATE TEMP TABLE IF NOT EXISTS deletion_targets (
                        uuid BLOB NOT NULL PRIMARY KEY, kind TEXT NOT NULL) WITHOUT ROWID;
                    DELETE FROM temp.deletion_targets;
                    """)
                try select(selection)
                try expandCorrelations()
                try refuseRunningWorkoutSamples()
                return try deleteTargets()
            }
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }

    private var emptyRange: StoreError {
        StoreError(.invalidArgument, path: path, message: "the range is empty: it must end after it starts")
    }

    private func select(_ selection: DeletionSelection) throws {
        let insert = "INSERT OR IGNORE INTO temp.deletion_targets (uuid, kind)"
        switch selection {
        case .ids(let ids):
            for id in ids {
                let inserted = try connection.run(
                    """
                    \(insert) SELECT uuid, 'quantity' FROM samples WHERE uuid = ?1
                    UNION ALL SELECT uuid, 'correlation' FROM correlations WHERE uuid = ?1
                    UNION ALL SELECT uuid, 'heartbeatSeries' FROM heartbeat_series WHERE uuid = ?1
                    UNION ALL SELECT uuid, 'workout' FROM workouts WHERE uuid = ?1
                    """, [.blob(id.bytes)])
                guard inserted > 0 else {
                    throw StoreError(.invalidArgument, path: path, message: "no object with uuid \(id) is stored")
                }
            }
        case .device(let device, let from, let to):
            let bindings: [SQLiteValue] = [
                .text(device), .integer(Self.microseconds(from)), .integer(Self.microseconds(to)),
            ]
            for (table, kind) in [("samples", "quantity"), ("correlations", "correlation"), ("heartbeat_series", "heartbeatSeries")] {
                try connection.run(
                    """
                    \(insert) SELECT o.uuid, '\(kind)' FROM \(table) o JOIN devices d ON d.id = o.device_id
                    WHERE (d.name = ?1 OR d.local_identifier = ?1) AND o.start_us >= ?2 AND o.start_us < ?3
                    """, bindings)
            }
        case .type(let type, let from, let to):
            let range: [SQLiteValue] = [.integer(Self.microseconds(from)), .integer(Self.microseconds(to))]
            let (table, kind, typed): (String, String, Bool) = switch type {
            case .quantity: ("samples", "quantity", true)
            case .correlation: ("correlations", "correlation", true)
            case .heartbeatSeries: ("heartbeat_series", "heartbeatSeries", false)
            case .workout: ("workouts", "workout", false)
            }
            try connection.run(
                """
                \(insert) SELECT uuid, '\(kind)' FROM \(table)
                WHERE start_us >= ?1 AND start_us < ?2\(typed ? " AND type = ?3" : "")
                """, typed ? range + [.text(type.identifier)] : range)
        }
    }

    /// A correlation goes whole: with its members, and a member takes its correlation along.
    private func expandCorrelations() throws {
        try connection.run(
            """
            INSERT OR IGNORE INTO temp.deletion_targets (uuid, kind)
            SELECT correlation_uuid, 'correlation' FROM correlation_members
            WHERE sample_uuid IN (SELECT uuid FROM temp.deletion_targets WHERE kind = 'quantity')
            """)
        try connection.run(
            """
            INSERT OR IGNORE INTO temp.deletion_targets (uuid, kind)
            SELECT sample_uuid, 'quantity' FROM correlation_members
            WHERE correlation_uuid IN (SELECT uuid FROM temp.deletion_targets WHERE kind = 'correlation')
            """)
    }

    /// Throws `.inUse` when a target is collected by a workout in progress: the same rule as
    /// the live workout's own read-back (its types, its devices or every device, ending at or
    /// after its first start).
    private func refuseRunningWorkoutSamples() throws {
        let running = try connection.query(
            """
            SELECT o.uuid, w.uuid FROM (
                SELECT s.uuid, s.type, s.end_us, s.device_id FROM samples s
                WHERE s.uuid IN (SELECT uuid FROM temp.deletion_targets WHERE kind = 'quantity')
                UNION ALL SELECT h.uuid, 'heartRate', h.end_us, h.device_id FROM heartbeat_series h
                WHERE h.uuid IN (SELECT uuid FROM temp.deletion_targets WHERE kind = 'heartbeatSeries')
            ) o
            LEFT JOIN devices d ON d.id = o.device_id
            JOIN live_workouts w ON EXISTS (SELECT 1 FROM json_each(w.types) WHERE value = o.type)
                AND (w.devices IS NULL OR EXISTS (
                    SELECT 1 FROM json_each(w.devices) WHERE value = d.name OR value = d.local_identifier))
                AND o.end_us >= (
                    SELECT min(at_us) FROM live_workout_events e WHERE e.workout_uuid = w.uuid AND e.action = 'start')
            LIMIT 1
            """)
        guard let row = running.first else { return }
        let sample = row.blob(0).flatMap { SampleID(bytes: $0) }.map(\.description) ?? "?"
        let workout = row.blob(1).flatMap { SampleID(bytes: $0) }.map(\.description) ?? "?"
        throw StoreError(
            .inUse, path: path,
            message: "\(sample) is collected by the running workout \(workout); end the workout first (nothing was deleted)")
    }

    private func deleteTargets() throws -> [(id: SampleID, kind: HealthRecordKind)] {
        let targets = try connection.query("SELECT uuid, kind FROM temp.deletion_targets ORDER BY uuid")
        func of(_ kind: String) -> String { "(SELECT uuid FROM temp.deletion_targets WHERE kind = '\(kind)')" }
        try connection.run("DELETE FROM correlation_members WHERE correlation_uuid IN \(of("correlation"))")
        try connection.run("DELETE FROM correlations WHERE uuid IN \(of("correlation"))")
        try connection.run("DELETE FROM samples WHERE uuid IN \(of("quantity"))")
        try connection.run("DELETE FROM heartbeat_series WHERE uuid IN \(of("heartbeatSeries"))")
        try connection.run("DELETE FROM workout_statistics WHERE workout_uuid IN \(of("workout"))")
        try connection.run("DELETE FROM workouts WHERE uuid IN \(of("workout"))")
        return try targets.map { row throws(StoreError) in
            guard let bytes = row.blob(0), let id = SampleID(bytes: bytes), let kind = row.text(1).flatMap(HealthRecordKind.init)
            else { throw StoreError(.invalidData, path: path, message: "a deletion target is malformed") }
            return (id, kind)
        }
    }
}
