import HealthModel
import SQLite

// HealthKit's rules for a record whose uuid or sync identifier is stored already: which of the
// two the store keeps, and the older version deleted (with its tombstone) when the new one
// replaces it.
extension RecordWriter {
    /// What to do with a record that has a uuid of its own table (correlation, heartbeat
    /// series, workout).
    enum Decision { case insert, replace, ignore }

    /// Applies the uuid and sync-version rules for a record about to be inserted into `table`
    /// (correlations, heartbeat series, workouts: tables with a unique uuid), deleting the older
    /// version, with its tombstone, when the new one replaces it.
    /// The sync identifier and version are the record's `metadata`'s.
    func resolve(table: String, kind: HealthRecordKind, id: SampleID, metadata: Metadata) throws -> Decision {
        let key = SQLiteValue.blob(id.bytes)
        if try !connection.query("SELECT 1 FROM \(table) WHERE uuid = ?1", [key]).isEmpty { return .ignore }
        guard let syncIdentifier = metadata.syncIdentifier else { return .insert }
        let version = metadata.syncVersion ?? 0
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

    /// The `sync_identifier`, `sync_version` and `metadata_set_id` columns of a record with
    /// `metadata`, in that order (NULL where it has none), interning its metadata set.
    func syncColumns(of metadata: Metadata) throws -> [SQLiteValue] {
        [metadata.syncIdentifier.map(SQLiteValue.text) ?? .null, metadata.syncVersion.map(SQLiteValue.integer) ?? .null,
         try metadataSetID(for: metadata).map(SQLiteValue.integer) ?? .null]
    }

    /// What to do with a quantity sample; `ignore` and `refuse` name the anchor of the sample
    /// that wins.
    enum SampleDecision { case insert, replace, ignore(anchor: Int64?), refuse(anchor: Int64) }

    /// The sync rules for a quantity sample with a sync identifier: the stored sample with that
    /// identifier wins unless this one's version is higher; then the stored one is deleted (its
    /// tombstone written) and this one is inserted. One of the same version that says something
    /// else (another type or value) is refused, not taken for the same reading sent again: two
    /// readings a source could not tell apart, which the caller reports. Its dates may differ:
    /// a record downloaded again can be placed anew (a meter's clock offset measured again).
    func resolveSample(
        _ sample: QuantitySample, syncIdentifier: String, version: Int64, typeID: Int64
    ) throws -> SampleDecision {
        guard let existing = try connection.query(
            """
            SELECT s.anchor, s.uuid, y.sync_version, s.type_id, s.value
            FROM sample_sync y JOIN samples s ON s.anchor = y.anchor
            WHERE y.sync_identifier = ?1
            """, [.text(syncIdentifier)]).first, let anchor = existing.integer(0)
        else { return .insert }
        let storedVersion = existing.integer(2) ?? 0
        if version == storedVersion {
            // Equal to 15 digits: a value stored with a conversion's binary noise (before the
            // conversions dropped it) is the same reading sent again.
            let same = existing.integer(3) == typeID
                && existing.double(4).map(\.withoutConversionNoise) == sample.canonicalValue.withoutConversionNoise
            return same ? .ignore(anchor: anchor) : .refuse(anchor: anchor)
        }
        guard version > storedVersion else { return .ignore(anchor: anchor) }
        let typeName = try connection.query(
            "SELECT identifier FROM quantity_types WHERE id = ?1", [existing.values[3]]).first?.text(0) ?? sample.type.identifier
        try deleteObject(table: "samples", anchor: anchor, uuid: existing.values[1], kind: .quantity, type: typeName)
        return .replace
    }
}
