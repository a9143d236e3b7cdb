import HealthModel
import SQLite

extension RecordWriter {
    /// Deletes the objects `selection` names, in ONE immediate transaction, each leaving a
    /// tombstone with an anchor of its own.
    ///
    /// Refused, deleting nothing, when a selected sample or series is collected by a workout in
    /// progress (`live_workouts`: its type, one of its devices, ending after the workout
    /// started): the workout reads its samples back from the store when it ends. A quantity
    /// series goes whole: selected by its uuid, or by its start in a device's or type's range.
    ///
    /// Quantity samples have no index on their uuid alone, so a deletion by uuid reads the
    /// samples table once (for every uuid given together).
    /// - Returns: the uuids and kinds deleted, by uuid; empty when nothing matched a device or
    ///   type range.
    /// - Throws: ``StoreError`` `.invalidArgument` for an unknown uuid or an empty range,
    ///   `.inUse` for a sample of a running workout, or the SQLite failure.
    func delete(_ selection: DeletionSelection) throws(StoreError) -> [(id: SampleID, kind: HealthRecordKind)] {
        if case .device(_, let from, let to) = selection, to <= from { throw emptyRange }
        if case .type(_, let from, let to) = selection, to <= from { throw emptyRange }
        return try transaction { () throws -> [(id: SampleID, kind: HealthRecordKind)] in
            try selectTargets(selection)
            try refuseRunningWorkoutSamples()
            return try deleteTargets()
        }
    }

    /// Fills `temp.deletion_targets` with the objects `selection` names, a correlation with its
    /// members; only inside ``transaction(_:)``.
    func selectTargets(_ selection: DeletionSelection) throws {
        try connection.execute("""
            CREATE TEMP TABLE IF NOT EXISTS deletion_targets (
                kind TEXT NOT NULL, anchor INTEGER NOT NULL, uuid BLOB NOT NULL, type TEXT NOT NULL,
                PRIMARY KEY (kind, anchor)) WITHOUT ROWID;
            DELETE FROM temp.deletion_targets;
            """)
        try select(selection)
        try expandCorrelations()
    }

    private var emptyRange: StoreError {
        StoreError(.invalidArgument, path: path, message: "the range is empty: it must end after it starts")
    }

    /// The kinds of object, their tables and the SQL for their type (relative to alias `o`).
    private static let tables: [(kind: HealthRecordKind, table: String, type: String)] = [
        (.quantity, "samples", "(SELECT identifier FROM quantity_types WHERE id = o.type_id)"),
        (.quantitySeries, "quantity_series", "(SELECT identifier FROM quantity_types WHERE id = o.type_id)"),
        (.correlation, "correlations", "o.type"),
        (.heartbeatSeries, "heartbeat_series", "'heartbeatSeries'"),
        (.workout, "workouts", "'workout'"),
    ]

    private func select(_ selection: DeletionSelection) throws {
        func insert(_ kind: HealthRecordKind, _ table: String, _ type: String, where condition: String) -> String {
            """
            INSERT OR IGNORE INTO temp.deletion_targets (kind, anchor, uuid, type)
            SELECT '\(kind.rawValue)', o.anchor, o.uuid, \(type) FROM \(table) o WHERE \(condition)
            """
        }
        switch selection {
        case .ids(let ids):
            try connection.execute("""
                CREATE TEMP TABLE IF NOT EXISTS deletion_ids (uuid BLOB NOT NULL PRIMARY KEY) WITHOUT ROWID;
                DELETE FROM temp.deletion_ids;
                """)
            for id in ids {
                try connection.run("INSERT OR IGNORE INTO temp.deletion_ids (uuid) VALUES (?1)", [.blob(id.bytes)])
            }
            for (kind, table, type) in Self.tables {
                try connection.run(insert(kind, table, type, where: "o.uuid IN (SELECT uuid FROM temp.deletion_ids)"))
            }
            let missing = try connection.query(
                "SELECT uuid FROM temp.deletion_ids WHERE uuid NOT IN (SELECT uuid FROM temp.deletion_targets) LIMIT 1")
            if let bytes = missing.first?.blob(0), let id = SampleID(bytes: bytes) {
                let hint = id.version == 8
                    ? " (a quantity of a series has no uuid of its own: delete the series its `healthgate.series` names)" : ""
                throw StoreError(.invalidArgument, path: path, message: "no object with uuid \(id) is stored" + hint)
            }
        case .device(let device, let from, let to):
            let bindings: [SQLiteValue] = [
                .text(device), .integer(StoreTime.microseconds(from)), .integer(StoreTime.microseconds(to)),
            ]
            let ofDevice = "o.device_id IN (SELECT id FROM devices WHERE name = ?1 OR local_identifier = ?1 OR radio_identifier = ?1)"
            // Through the (type_id, start_us) index, one range per type.
            for (kind, table, type) in Self.tables[0...1] {
                try connection.run(insert(kind, table, type, where: """
                    o.type_id IN (SELECT id FROM quantity_types) AND o.start_us >= ?2 AND o.start_us < ?3 AND \(ofDevice)
                    """), bindings)
            }
            for (kind, table, type) in Self.tables[2...3] {
                try connection.run(
                    insert(kind, table, type, where: "o.start_us >= ?2 AND o.start_us < ?3 AND \(ofDevice)"), bindings)
            }
        case .type(let type, let from, let to):
            let range: [SQLiteValue] = [.integer(StoreTime.microseconds(from)), .integer(StoreTime.microseconds(to))]
            let inRange = "o.start_us >= ?1 AND o.start_us < ?2"
            switch type {
            case .quantity(let quantityType):
                for (kind, table, type) in Self.tables[0...1] {
                    try connection.run(insert(kind, table, type, where: """
                        o.type_id = (SELECT id FROM quantity_types WHERE identifier = ?3) AND \(inRange)
                        """), range + [.text(quantityType.identifier)])
                }
            case .correlation(let correlationType):
                try connection.run(
                    insert(.correlation, "correlations", "o.type", where: "o.type = ?3 AND \(inRange)"),
                    range + [.text(correlationType.identifier)])
            case .heartbeatSeries:
                try connection.run(insert(.heartbeatSeries, "heartbeat_series", "'heartbeatSeries'", where: inRange), range)
            case .workout:
                try connection.run(insert(.workout, "workouts", "'workout'", where: inRange), range)
            }
        case .person(let name):
            func carrying(_ key: MetadataKey) -> String {
                "o.metadata_set_id IN (SELECT set_id FROM metadata_set_entries WHERE key = '\(key.rawValue)' AND value = ?1)"
            }
            for (kind, table, type) in Self.tables {
                try connection.run(insert(kind, table, type, where: carrying(kind == .workout ? .participant : .person)), [.text(name)])
            }
            try connection.run("DELETE FROM participant_devices WHERE participant = ?1", [.text(name)])
            try recordErasure(of: name, at: now())
        }
    }

    /// A correlation goes whole: with its members, and a member takes its correlation along.
    private func expandCorrelations() throws {
        try connection.run(
            """
            INSERT OR IGNORE INTO temp.deletion_targets (kind, anchor, uuid, type)
            SELECT 'correlation', c.anchor, c.uuid, c.type FROM correlation_members m
            JOIN correlations c ON c.uuid = m.correlation_uuid
            WHERE m.sample_anchor IN (SELECT anchor FROM temp.deletion_targets WHERE kind = 'quantity')
            """)
        try connection.run(
            """
            INSERT OR IGNORE INTO temp.deletion_targets (kind, anchor, uuid, type)
            SELECT 'quantity', s.anchor, s.uuid, t.identifier FROM correlation_members m
            JOIN samples s ON s.anchor = m.sample_anchor JOIN quantity_types t ON t.id = s.type_id
            WHERE m.correlation_uuid IN (SELECT uuid FROM temp.deletion_targets WHERE kind = 'correlation')
            """)
    }

    /// Throws `.inUse` when a target is collected by a workout in progress: the same rule as
    /// the live workout's own read-back (its types, its devices or every device, ending at or
    /// after its first start).
    private func refuseRunningWorkoutSamples() throws {
        let running = try connection.query(
            """
            SELECT o.uuid, w.uuid FROM (
                SELECT s.uuid, t.type, s.start_us + s.duration_us AS end_us, s.device_id FROM samples s
                JOIN temp.deletion_targets t ON t.kind = 'quantity' AND t.anchor = s.anchor
                UNION ALL SELECT q.uuid, y.identifier, q.end_us, q.device_id FROM quantity_series q
                JOIN temp.deletion_targets t ON t.kind = 'quantitySeries' AND t.anchor = q.anchor
                JOIN quantity_types y ON y.id = q.type_id
                UNION ALL SELECT h.uuid, 'heartRate', h.end_us, h.device_id FROM heartbeat_series h
                JOIN temp.deletion_targets t ON t.kind = 'heartbeatSeries' AND t.anchor = h.anchor
            ) o
            LEFT JOIN devices d ON d.id = o.device_id
            JOIN live_workouts w ON EXISTS (SELECT 1 FROM json_each(w.types) WHERE value = o.type)
                AND (w.devices IS NULL OR EXISTS (
                    SELECT 1 FROM json_each(w.devices) WHERE value = d.name OR value = d.local_identifier OR value = d.radio_identifier))
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
        let targets = try connection.query("SELECT kind, anchor, uuid, type FROM temp.deletion_targets ORDER BY uuid")
        var deleted: [(id: SampleID, kind: HealthRecordKind)] = []
        for row in targets {
            guard let kind = row.text(0).flatMap(HealthRecordKind.init(rawValue:)), let anchor = row.integer(1),
                let bytes = row.blob(2), let id = SampleID(bytes: bytes), let type = row.text(3),
                let table = Self.tables.first(where: { $0.kind == kind })?.table
            else { throw StoreError(.invalidData, path: path, message: "a deletion target is malformed") }
            if kind == .workout {
                try connection.run("DELETE FROM workout_statistics WHERE workout_uuid = ?1", [row.values[2]])
            }
            // Child rows (beats, members, events, activities) go with ON DELETE CASCADE.
            try deleteObject(table: table, anchor: anchor, uuid: row.values[2], kind: kind, type: type)
            deleted.append((id, kind))
        }
        return deleted
    }
}
