import HealthModel
import SQLite

// Version 2: each distinct metadata set is stored once.
//
// In version 1 every metadata entry was its own `sample_metadata` row, keyed by its owner's
// uuid, so a heart-rate sample with the three entries every heart-rate monitor attaches (BLE
// address, battery level, sensor location) cost four row inserts instead of one, and the entries
// repeated, identical, on every sample of a device. Now a record points to a set
// (`metadata_set_id`), and a set is stored once: its entries in `metadata_entries`, found again by
// its canonical encoding (`metadata_sets.canonical`, see `StoreSchema.canonicalEncoding(of:)`).
//
// Sets are never deleted, not even when no record points to them any more (a record replaced
// through its sync identifier may leave its set unused): an unused set is a few bytes, and keeping
// them means an id cached by a writer stays valid for as long as the file exists.
extension StoreSchema {
    static let version2 = """
        CREATE TABLE metadata_sets (
            id INTEGER PRIMARY KEY,
            canonical BLOB NOT NULL UNIQUE
        );
        CREATE TABLE metadata_entries (
            set_id INTEGER NOT NULL REFERENCES metadata_sets (id),
            key TEXT NOT NULL,
            value_type TEXT NOT NULL CHECK (value_type IN ('string', 'integer', 'double', 'bool')),
            value NOT NULL,
            PRIMARY KEY (set_id, key)
        ) WITHOUT ROWID;

        -- NULL: no metadata (sync identifier and version stay in their own columns).
        ALTER TABLE samples ADD COLUMN metadata_set_id INTEGER REFERENCES metadata_sets (id);
        ALTER TABLE heartbeat_series ADD COLUMN metadata_set_id INTEGER REFERENCES metadata_sets (id);
        ALTER TABLE workouts ADD COLUMN metadata_set_id INTEGER REFERENCES metadata_sets (id);

        -- Every record's metadata, one row per entry, for the sqlite3 command-line shell.
        CREATE VIEW metadata_readable AS
            SELECT 'sample' AS record, lower(hex(r.uuid)) AS uuid, e.key, e.value_type, e.value
                FROM samples r JOIN metadata_entries e ON e.set_id = r.metadata_set_id
            UNION ALL
            SELECT 'heartbeat_series', lower(hex(r.uuid)), e.key, e.value_type, e.value
                FROM heartbeat_series r JOIN metadata_entries e ON e.set_id = r.metadata_set_id
            UNION ALL
            SELECT 'workout', lower(hex(r.uuid)), e.key, e.value_type, e.value
                FROM workouts r JOIN metadata_entries e ON e.set_id = r.metadata_set_id;
        """

    /// Takes a version-1 file to version 2, inside the migration's exclusive transaction: creates
    /// the tables and columns, moves every owner's `sample_metadata` rows into an interned set
    /// (values and their types exactly as stored), points the owner at it, and drops
    /// `sample_metadata`.
    ///
    /// `sample_metadata` rows whose owner is in none of the three record tables (only possible
    /// when written by hand: version 1 deleted an owner's metadata with it) were never readable
    /// and are dropped with the table. A row whose value does not fit its `value_type` (also
    /// only possible by hand) fails the migration, which rolls back and leaves the file at
    /// version 1 untouched: the error names the row so that it can be fixed with the sqlite3 shell.
    static func migrateToVersion2(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute(version2)
        var interner = MetadataSetInterner()
        // Streamed in primary-key order, so one owner's rows are consecutive and memory does not
        // grow with the table (a year of one heart-rate monitor is about 95 million rows).
        let rows = try connection.statement(
            "SELECT owner_uuid, key, value_type, value FROM sample_metadata ORDER BY owner_uuid, key")
        var owner: [UInt8]?
        var entries = Metadata()
        func moveEntries() throws(SQLiteError) {
            guard let owner, !entries.isEmpty else { return }
            // Checked first, so that entries nobody could read make no set.
            let exists = try connection.query(
                """
                SELECT EXISTS (SELECT 1 FROM samples WHERE uuid = ?1)
                    OR EXISTS (SELECT 1 FROM heartbeat_series WHERE uuid = ?1)
                    OR EXISTS (SELECT 1 FROM workouts WHERE uuid = ?1)
                """, [.blob(owner)]).first?.integer(0) ?? 0
            guard exists != 0 else { return }
            let id = try interner.id(of: entries, in: connection)
            // The uuid is in one of the tables; version 1 showed the metadata for whichever it is.
            for table in ["samples", "heartbeat_series", "workouts"] {
                try connection.run(
                    "UPDATE \(table) SET metadata_set_id = ?1 WHERE uuid = ?2", [.integer(id), .blob(owner)])
            }
        }
        while try rows.step() {
            let row = rows.row()
            guard let uuid = row.blob(0), let key = row.text(1) else {
                throw SQLiteError(
                    .mismatch, message: "a sample_metadata row has a NULL or non-text key, or a non-BLOB owner_uuid",
                    context: "migration to schema version 2")
            }
            if uuid != owner {
                try moveEntries()
                owner = uuid
                entries = Metadata()
            }
            guard let value = metadataValue(valueType: row.text(2), value: row.values[3]) else {
                let hex = uuid.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
                throw SQLiteError(
                    .mismatch,
                    message: "the sample_metadata row (owner_uuid x'\(hex)', key '\(key)') has value_type "
                        + "'\(row.text(2) ?? "NULL")' but a value that is not one; fix or delete it with the "
                        + "sqlite3 shell, the file stays at version 1 until then",
                    context: "migration to schema version 2")
            }
            entries[MetadataKey(key)] = value
        }
        try moveEntries()
        rows.reset()
        try connection.execute("DROP TABLE sample_metadata")
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
