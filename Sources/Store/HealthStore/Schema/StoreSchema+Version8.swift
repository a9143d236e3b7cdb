// Version 8: the change log logs an insert with one statement instead of two, and without the
// AUTOINCREMENT sequence row.
//
// Version 7's triggers delete an object's change row and insert a new one, and AUTOINCREMENT
// updates `sqlite_sequence` on every insert: B-tree writes a plain insert does not make. Here each trigger is
// one `INSERT OR REPLACE`: the unique index on `uuid` that the insert checks anyway finds the
// object's old row (or tombstone), which REPLACE deletes, and the new row's anchor is the
// greatest anchor plus one. SQLite picks that rowid before it deletes the conflicting row
// (https://sqlite.org/lang_conflict.html), so an object that holds the greatest anchor and is
// stored or deleted again still moves above it. Anchors therefore keep growing without
// AUTOINCREMENT as long as the row with the greatest anchor is never deleted otherwise, which
// ``StoreSchema/purgeTombstones`` already guarantees (it keeps that row, so `max(anchor)` is the
// latest anchor handed out).
//
// The statement that fired a trigger decides the conflict policy only when it names one (`INSERT
// OR IGNORE`); the writer's `ON CONFLICT DO NOTHING` is an upsert clause, which leaves the
// trigger's REPLACE in force (https://sqlite.org/lang_createtrigger.html).
//
// The table is rebuilt to drop AUTOINCREMENT (SQLite cannot alter a key), keeping every anchor,
// tombstone and deletion time.
extension StoreSchema {
    static let version8 = """
        DROP TRIGGER samples_changes_insert;
        DROP TRIGGER samples_changes_delete;
        DROP TRIGGER correlations_changes_insert;
        DROP TRIGGER correlations_changes_delete;
        DROP TRIGGER heartbeat_series_changes_insert;
        DROP TRIGGER heartbeat_series_changes_delete;
        DROP TRIGGER heartbeat_series_changes_update;
        DROP TRIGGER workouts_changes_insert;
        DROP TRIGGER workouts_changes_delete;

        CREATE TABLE changes_version8 (
            anchor INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('quantity', 'correlation', 'heartbeatSeries', 'workout')),
            type TEXT NOT NULL,
            deleted_us INTEGER
        );
        INSERT INTO changes_version8 (anchor, uuid, kind, type, deleted_us)
        SELECT anchor, uuid, kind, type, deleted_us FROM changes ORDER BY anchor;
        DROP TABLE changes;
        DELETE FROM sqlite_sequence WHERE name = 'changes';
        ALTER TABLE changes_version8 RENAME TO changes;
        CREATE UNIQUE INDEX changes_uuid ON changes (uuid);
        CREATE INDEX changes_tombstones ON changes (deleted_us) WHERE deleted_us IS NOT NULL;

        \(replacingChangeTriggers(table: "samples", kind: "quantity", hasTypeColumn: true))
        \(replacingChangeTriggers(table: "correlations", kind: "correlation", hasTypeColumn: true))
        \(replacingChangeTriggers(table: "heartbeat_series", kind: "heartbeatSeries", hasTypeColumn: false))
        \(replacingChangeTriggers(table: "workouts", kind: "workout", hasTypeColumn: false))
        CREATE TRIGGER heartbeat_series_changes_update AFTER UPDATE ON heartbeat_series BEGIN
            INSERT OR REPLACE INTO changes (uuid, kind, type) VALUES (NEW.uuid, 'heartbeatSeries', 'heartbeatSeries');
        END;
        """

    /// The insert and delete triggers of `table` in version 8's form: one `INSERT OR REPLACE` each.
    private static func replacingChangeTriggers(table: String, kind: String, hasTypeColumn: Bool) -> String {
        let newType = hasTypeColumn ? "NEW.type" : "'\(kind)'"
        let oldType = hasTypeColumn ? "OLD.type" : "'\(kind)'"
        return """
            CREATE TRIGGER \(table)_changes_insert AFTER INSERT ON \(table) BEGIN
                INSERT OR REPLACE INTO changes (uuid, kind, type) VALUES (NEW.uuid, '\(kind)', \(newType));
            END;
            CREATE TRIGGER \(table)_changes_delete AFTER DELETE ON \(table) BEGIN
                INSERT OR REPLACE INTO changes (uuid, kind, type, deleted_us) VALUES (OLD.uuid, '\(kind)', \(oldType),
                    CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER));
            END;
            """
    }
}
