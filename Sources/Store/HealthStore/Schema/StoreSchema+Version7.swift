// Version 7: the change log, so that the store can be a sync source (anchored queries).
//
// `changes` holds one row per stored or deleted object (quantity sample, correlation, heartbeat
// series, workout): its anchor is an INTEGER PRIMARY KEY AUTOINCREMENT, so a new row gets an
// anchor above every one the table ever held, also when the row just deleted had the greatest
// (https://sqlite.org/autoinc.html): the triggers replace an object's row by deleting it first. Triggers keep it in step with the object tables, so every path
// that writes or deletes (the writer, a sync-identifier replacement, `healthgate delete`, the
// sqlite3 shell) moves the log in the same transaction:
// - an insert, or a heartbeat series growing in place, gives the object a new row (its old row,
//   or its tombstone, goes), so a client sees it again after its anchor;
// - a delete replaces the object's row by a tombstone (`deleted_us` set) with a new anchor.
// Anchors therefore only grow, also across close and reopen. The row with the greatest anchor
// is never purged (see ``StoreSchema/purgeTombstones``), so `max(anchor)` is the latest anchor
// handed out.
//
// Tombstones are kept for the sink's `tombstoneRetentionDays`; `change_retention.purged_through`
// is the greatest anchor purged, and a client whose anchor is below it may have missed a
// deletion (`StoreError.Code.anchorExpired`). The deletion time is SQLite's clock (triggers
// cannot take parameters); only the purge compares it, against the gateway clock's date.
//
// Existing objects get anchors in uuid order: UUIDv7 keys sort by creation time.
extension StoreSchema {
    static let version7 = """
        CREATE TABLE changes (
            anchor INTEGER PRIMARY KEY AUTOINCREMENT,
            uuid BLOB NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('quantity', 'correlation', 'heartbeatSeries', 'workout')),
            type TEXT NOT NULL,
            deleted_us INTEGER
        );
        CREATE UNIQUE INDEX changes_uuid ON changes (uuid);
        CREATE INDEX changes_tombstones ON changes (deleted_us) WHERE deleted_us IS NOT NULL;

        CREATE TABLE change_retention (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            purged_through INTEGER NOT NULL
        );
        INSERT INTO change_retention (id, purged_through) VALUES (1, 0);

        INSERT INTO changes (uuid, kind, type)
        SELECT uuid, kind, type FROM (
            SELECT uuid, 'quantity' AS kind, type FROM samples
            UNION ALL SELECT uuid, 'correlation', type FROM correlations
            UNION ALL SELECT uuid, 'heartbeatSeries', 'heartbeatSeries' FROM heartbeat_series
            UNION ALL SELECT uuid, 'workout', 'workout' FROM workouts
        ) ORDER BY uuid;

        \(changeTriggers(table: "samples", kind: "quantity", hasTypeColumn: true))
        \(changeTriggers(table: "correlations", kind: "correlation", hasTypeColumn: true))
        \(changeTriggers(table: "heartbeat_series", kind: "heartbeatSeries", hasTypeColumn: false))
        \(changeTriggers(table: "workouts", kind: "workout", hasTypeColumn: false))
        CREATE TRIGGER heartbeat_series_changes_update AFTER UPDATE ON heartbeat_series BEGIN
            DELETE FROM changes WHERE uuid = OLD.uuid;
            INSERT INTO changes (uuid, kind, type) VALUES (NEW.uuid, 'heartbeatSeries', 'heartbeatSeries');
        END;
        """

    /// The insert and delete triggers that log the objects of `table`. A table of one type
    /// (heartbeat series, workouts) logs its kind as the type.
    private static func changeTriggers(table: String, kind: String, hasTypeColumn: Bool) -> String {
        let newType = hasTypeColumn ? "NEW.type" : "'\(kind)'"
        let oldType = hasTypeColumn ? "OLD.type" : "'\(kind)'"
        return """
            CREATE TRIGGER \(table)_changes_insert AFTER INSERT ON \(table) BEGIN
                DELETE FROM changes WHERE uuid = NEW.uuid;
                INSERT INTO changes (uuid, kind, type) VALUES (NEW.uuid, '\(kind)', \(newType));
            END;
            CREATE TRIGGER \(table)_changes_delete AFTER DELETE ON \(table) BEGIN
                DELETE FROM changes WHERE uuid = OLD.uuid;
                INSERT INTO changes (uuid, kind, type, deleted_us) VALUES (OLD.uuid, '\(kind)', \(oldType),
                    CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER));
            END;
            """
    }
}
