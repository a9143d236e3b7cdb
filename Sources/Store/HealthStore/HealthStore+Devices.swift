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
        // Devices first: few rows, and the samples' (type_id, start_us) index then bounds the scan
        // to one type's rows.
        try await holdsRecords(
            "device_id", in: "SELECT id FROM devices WHERE coalesce(local_identifier, name) = ?1", named: device, type: type)
    }

    /// Whether the store holds a reading of `person` (``HealthModel/MetadataKey/person``) of
    /// `type` (a quantity or correlation type's identifier; nil: of any type): what tells a
    /// remote sink that a deletion left nothing of theirs of the type (the `mqtt` sink's Home
    /// Assistant sensors).
    public func holdsRecords(person: String, type: String?) async throws(StoreError) -> Bool {
        try await holdsRecords(
            "metadata_set_id", in: "SELECT set_id FROM metadata_set_entries WHERE key = '\(MetadataKey.person.rawValue)' AND value = ?1",
            named: person, type: type)
    }

    /// Whether a sample, a quantity series or a correlation of `type` (nil: any) has its
    /// `column` among the rows `matching` selects (with `name` as `?1`).
    private func holdsRecords(_ column: String, in matching: String, named name: String, type: String?) async throws(StoreError) -> Bool {
        let path = self.path
        return try await shortRead { connection throws(StoreError) in
            let row = try Self.run(
                connection,
                """
                WITH matching AS (\(matching))
                SELECT EXISTS (
                    SELECT 1 FROM samples s JOIN quantity_types t ON t.id = s.type_id
                    WHERE (?2 IS NULL OR t.identifier = ?2) AND s.\(column) IN (SELECT * FROM matching))
                OR EXISTS (
                    SELECT 1 FROM quantity_series q JOIN quantity_types t ON t.id = q.type_id
                    WHERE (?2 IS NULL OR t.identifier = ?2) AND q.\(column) IN (SELECT * FROM matching))
                OR EXISTS (SELECT 1 FROM correlations c WHERE (?2 IS NULL OR c.type = ?2) AND c.\(column) IN (SELECT * FROM matching))
                """,
                [.text(name), type.map(SQLiteValue.text) ?? .null], path: path
            ).first
            return row?.integer(0) == 1
        }
    }
}
