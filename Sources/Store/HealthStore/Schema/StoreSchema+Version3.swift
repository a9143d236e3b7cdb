import SQLite

// Version 3: source checkpoints.
//
// A source with resumable state (the serial pedometer's counter per device) publishes it as a
// checkpoint beside the records it covers; the sink writes the checkpoint in the same
// transaction as those records, so that the stored state and the stored records agree after any
// crash. One row per (namespace, key): the source kind and its own key (the pedometer: the
// device serial number). The payload is the source's own encoding, opaque to the store.
extension StoreSchema {
    static let version3 = """
        CREATE TABLE source_checkpoints (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            payload BLOB NOT NULL,
            PRIMARY KEY (namespace, key)
        ) WITHOUT ROWID;
        """

    /// Stores one checkpoint, replacing the one with the same namespace and key (3 parameters:
    /// namespace, key, payload). An empty payload binds as NULL through the C API (no base
    /// address), hence the `ifnull`.
    static let upsertSourceCheckpoint = """
        INSERT INTO source_checkpoints (namespace, key, payload) VALUES (?1, ?2, ifnull(?3, x''))
        ON CONFLICT (namespace, key) DO UPDATE SET payload = excluded.payload
        """

    /// Reads one checkpoint's payload (2 parameters: namespace, key).
    static let selectSourceCheckpoint = """
        SELECT payload FROM source_checkpoints WHERE namespace = ?1 AND key = ?2
        """
}
