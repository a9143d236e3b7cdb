import HealthModel
import SQLite

// Deleting stored objects: each leaves a tombstone with an anchor of its own, so that the change
// log tells sync clients and followers what went.
extension RecordWriter {
    /// Deletes the object at `anchor` from `table` (a sample with its sync identifier) and
    /// writes its tombstone with the next anchor.
    func deleteObject(table: String, anchor: Int64, uuid: SQLiteValue, kind: HealthRecordKind, type: String) throws {
        try writeTombstone(
            uuid: uuid, kind: kind, type: type, device: try deviceKey(table: table, anchor: anchor),
            person: try personKey(table: table, anchor: anchor))
        if kind == .quantity {
            // Its sync identifier's row, if it has one: the row at its anchor (version 17's index).
            try connection.run("DELETE FROM sample_sync WHERE anchor = ?1", [.integer(anchor)])
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

    /// The person of the reading at `anchor` in `table` (``HealthModel/MetadataKey/person``),
    /// or nil: nobody's, or a workout (its participant's, which has no reading of its own).
    private func personKey(table: String, anchor: Int64) throws(SQLiteError) -> String? {
        guard table != "workouts" else { return nil }
        return try connection.query(
            """
            SELECT e.value FROM \(table) x JOIN metadata_set_entries e ON e.set_id = x.metadata_set_id
            WHERE x.anchor = ?1 AND e.key = '\(MetadataKey.person.rawValue)'
            """,
            [.integer(anchor)]).first?.text(0)
    }

    /// Writes the tombstone of a deleted object with the next anchor (replacing an older
    /// tombstone of the same uuid), dated by the writer's clock.
    func writeTombstone(
        uuid: SQLiteValue, kind: HealthRecordKind, type: String, device: String?, person: String? = nil
    ) throws(SQLiteError) {
        transactionBytes += LogRetention.tombstoneBytes
        try connection.run(
            "INSERT OR REPLACE INTO tombstones (anchor, uuid, kind, type, deleted_us, device, person) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            [.integer(nextAnchor()), uuid, .text(kind.rawValue), .text(type), .integer(StoreTime.microseconds(now())),
             device.map(SQLiteValue.text) ?? .null, person.map(SQLiteValue.text) ?? .null])
        hasTombstones = true
    }

    /// An object stored again after its deletion: its tombstone goes, so that it appears once
    /// in the change log, at its new anchor.
    func removeTombstone(of id: SampleID) throws(SQLiteError) {
        try connection.run("DELETE FROM tombstones WHERE uuid = ?1", [.blob(id.bytes)])
    }
}
