import HealthModel
import SQLite

extension HealthStore {
    /// Whether the store still holds a quantity sample, a quantity series or a correlation of `type` (a quantity or
    /// correlation type's identifier; nil: of any type) from `device`, named as remote sinks name
    /// it (its local identifier, else its name; see ``StoreChanges/Deletion/device``).
    ///
    /// A follower that announces one entity per device and type (the MQTT sink's Home Assistant
    /// discovery) asks after a deletion whether the entity still has anything behind it. Records a
    /// follower's retention already pruned count as gone.
    public func holdsRecords(device: String, type: String?) async throws(StoreError) -> Bool {
        let path = self.path
        return try await shortRead { connection throws(StoreError) in
            // Devices first: few rows, and the samples' (type_id, start_us) index then bounds the scan
            // to one type's rows.
            let row = try Self.run(
                connection,
                """
                WITH matching AS (SELECT id FROM devices WHERE coalesce(local_identifier, name) = ?1)
                SELECT EXISTS (
                    SELECT 1 FROM samples s JOIN quantity_types t ON t.id = s.type_id
                    WHERE (?2 IS NULL OR t.identifier = ?2) AND s.device_id IN (SELECT id FROM matching))
                OR EXISTS (
                    SELECT 1 FROM quantity_series q JOIN quantity_types t ON t.id = q.type_id
                    WHERE (?2 IS NULL OR t.identifier = ?2) AND q.device_id IN (SELECT id FROM matching))
                OR EXISTS (SELECT 1 FROM correlations c WHERE (?2 IS NULL OR c.type = ?2) AND c.device_id IN (SELECT id FROM matching))
                """,
                [.text(device), type.map(SQLiteValue.text) ?? .null], path: path
            ).first
            return row?.integer(0) == 1
        }
    }

    /// Whether the store holds a reading of `person` (``HealthModel/MetadataKey/person``) of
    /// `type` (a quantity or correlation type's identifier; nil: of any type): what tells a
    /// remote sink that a deletion left nothing of theirs of the type (the `mqtt` sink's Home
    /// Assistant sensors).
    public func holdsRecords(person: String, type: String?) async throws(StoreError) -> Bool {
        let path = self.path
        return try await shortRead { connection throws(StoreError) in
            let row = try Self.run(
                connection,
                """
                WITH sets AS (SELECT set_id FROM metadata_set_entries WHERE key = '\(MetadataKey.person.rawValue)' AND value = ?1)
                SELECT EXISTS (
                    SELECT 1 FROM samples s JOIN quantity_types t ON t.id = s.type_id
                    WHERE (?2 IS NULL OR t.identifier = ?2) AND s.metadata_set_id IN (SELECT set_id FROM sets))
                OR EXISTS (
                    SELECT 1 FROM quantity_series q JOIN quantity_types t ON t.id = q.type_id
                    WHERE (?2 IS NULL OR t.identifier = ?2) AND q.metadata_set_id IN (SELECT set_id FROM sets))
                OR EXISTS (SELECT 1 FROM correlations c WHERE (?2 IS NULL OR c.type = ?2) AND c.metadata_set_id IN (SELECT set_id FROM sets))
                """,
                [.text(person), type.map(SQLiteValue.text) ?? .null], path: path
            ).first
            return row?.integer(0) == 1
        }
    }
}
