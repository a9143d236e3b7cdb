import HealthModel
import SQLite

// Version 9: the anchor is the object's own key, and a sample's row is small.
//
// Versions 7 and 8 kept a `changes` row per object beside the object, written by triggers: every
// stored sample wrote four B-trees (the sample, its type/start index, its change row and that
// row's uuid index). Here each object table's INTEGER PRIMARY KEY is the object's anchor, so
// storing an object writes its own row and nothing else, and a deletion writes one tombstone:
// - `samples`, `correlations`, `heartbeat_series` and `workouts` are rowid tables keyed by
//   `anchor`. The writer assigns anchors from one sequence for the four tables and the
//   tombstones (`anchors.latest`, read at the start of each write transaction, so a second
//   writing process (`healthgate delete`) continues the same sequence); anchors only grow and
//   are never reused. A heartbeat series that grows, and an object stored again, move to a new
//   anchor.
// - `tombstones` holds one row per deleted object, keyed by the anchor of its deletion.
// - `samples` has one index, `(type_id, start_us, uuid)`, which every range query and statistic
//   reads and which makes a sample delivered twice a no-op (the same uuid, type and start). A
//   quantity sample has no index on its uuid alone: a lookup by uuid (`healthgate delete --id`)
//   scans the table, and a workout's linked samples are found by type and time range first.
//   A sample's sync identifier and version are entries of its metadata set, as HealthKit
//   has them, and the few samples that have one are listed in `sample_sync`, by identifier.
// - Types and units are small integers (`quantity_types`, `units`), the end is a duration (0,
//   stored in no bytes, for the instantaneous samples that make up most of a store), and a value
//   recorded in the canonical unit has no second copy (`original_value` NULL).
// - The samples table declares no foreign keys: the writer is its only writer and takes every
//   id it stores from the tables it points to, and a foreign key would cost a lookup per row.
//
// Every object keeps the anchor the change log gave it, every tombstone its anchor and deletion
// time, and `purged_through` carries over, so a client's anchor from version 8 stays valid.
// The old tables are rebuilt (foreign keys are off during migrations, see
// ``SQLite/SQLiteConnection/migrate(_:)-([SQLiteMigration])``); the step fails, leaving the file at
// version 8, if any object lacks a change row.
extension StoreSchema {
    static let version9 = """
        PRAGMA application_id = 1212629332;
        DROP VIEW samples_readable;
        DROP VIEW workouts_readable;
        DROP VIEW metadata_readable;
        DROP TRIGGER samples_changes_insert;
        DROP TRIGGER samples_changes_delete;
        DROP TRIGGER correlations_changes_insert;
        DROP TRIGGER correlations_changes_delete;
        DROP TRIGGER heartbeat_series_changes_insert;
        DROP TRIGGER heartbeat_series_changes_delete;
        DROP TRIGGER heartbeat_series_changes_update;
        DROP TRIGGER workouts_changes_insert;
        DROP TRIGGER workouts_changes_delete;

        -- The quantity types samples point to, with the longest sample of each, so that a range
        -- query on start_us also finds cumulative samples that started before the range.
        CREATE TABLE quantity_types (
            id INTEGER PRIMARY KEY,
            identifier TEXT NOT NULL UNIQUE,
            max_duration_us INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO quantity_types (identifier, max_duration_us)
            SELECT s.type, ifnull((SELECT p.max_duration_us FROM sample_type_spans p WHERE p.type = s.type), 0)
            FROM (SELECT DISTINCT type FROM samples) s ORDER BY s.type;
        DROP TABLE sample_type_spans;

        -- The units samples were recorded in.
        CREATE TABLE units (
            id INTEGER PRIMARY KEY,
            unit TEXT NOT NULL UNIQUE
        );
        INSERT INTO units (unit) SELECT DISTINCT unit FROM samples ORDER BY unit;

        -- The latest anchor handed out, and the greatest anchor whose tombstone was purged.
        CREATE TABLE anchors (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            latest INTEGER NOT NULL,
            purged_through INTEGER NOT NULL
        );
        INSERT INTO anchors (id, latest, purged_through)
            SELECT 1, (SELECT ifnull(max(anchor), 0) FROM changes), purged_through FROM change_retention;
        DROP TABLE change_retention;

        CREATE TABLE samples_version9 (
            anchor INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL,
            type_id INTEGER NOT NULL,
            value REAL NOT NULL,
            unit_id INTEGER NOT NULL,
            original_value REAL,
            start_us INTEGER NOT NULL,
            duration_us INTEGER NOT NULL,
            device_id INTEGER,
            metadata_set_id INTEGER
        );
        INSERT INTO samples_version9 (anchor, uuid, type_id, value, unit_id, original_value, start_us, duration_us,
            device_id, metadata_set_id)
        SELECT c.anchor, s.uuid, t.id, s.value, u.id, nullif(s.original_value, s.value), s.start_us, s.end_us - s.start_us,
            s.device_id, s.metadata_set_id
        FROM samples s JOIN changes c ON c.uuid = s.uuid AND c.deleted_us IS NULL
            JOIN quantity_types t ON t.identifier = s.type JOIN units u ON u.unit = s.unit
        ORDER BY c.anchor;

        -- The samples that have a sync identifier, found by it: few samples have one, so a table
        -- of their own costs nothing on the others' inserts, where an index on samples would cost
        -- a cursor per insert. The identifier and version themselves are entries of the
        -- sample's metadata set (RecordWriter moves them there: the step's Swift half).
        CREATE TABLE sample_sync (
            sync_identifier TEXT NOT NULL PRIMARY KEY,
            anchor INTEGER NOT NULL,
            sync_version INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO sample_sync (sync_identifier, anchor, sync_version)
        SELECT s.sync_identifier, c.anchor, ifnull(s.sync_version, 0)
        FROM samples s JOIN changes c ON c.uuid = s.uuid AND c.deleted_us IS NULL
        WHERE s.sync_identifier IS NOT NULL;

        CREATE TABLE correlations_version9 (
            anchor INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL UNIQUE,
            type TEXT NOT NULL,
            start_us INTEGER NOT NULL,
            end_us INTEGER NOT NULL,
            device_id INTEGER REFERENCES devices (id),
            sync_identifier TEXT,
            sync_version INTEGER,
            metadata_set_id INTEGER REFERENCES metadata_sets (id)
        );
        INSERT INTO correlations_version9 (anchor, uuid, type, start_us, end_us, device_id, sync_identifier,
            sync_version, metadata_set_id)
        SELECT c.anchor, o.uuid, o.type, o.start_us, o.end_us, o.device_id, o.sync_identifier, o.sync_version,
            o.metadata_set_id
        FROM correlations o JOIN changes c ON c.uuid = o.uuid AND c.deleted_us IS NULL ORDER BY c.anchor;

        -- A member is found by its anchor: samples have no index on the uuid alone.
        CREATE TABLE correlation_members_version9 (
            correlation_uuid BLOB NOT NULL REFERENCES correlations (uuid) ON DELETE CASCADE,
            member_index INTEGER NOT NULL,
            sample_anchor INTEGER NOT NULL,
            PRIMARY KEY (correlation_uuid, member_index)
        ) WITHOUT ROWID;
        INSERT INTO correlation_members_version9 (correlation_uuid, member_index, sample_anchor)
        SELECT m.correlation_uuid, m.member_index, c.anchor
        FROM correlation_members m JOIN changes c ON c.uuid = m.sample_uuid AND c.deleted_us IS NULL;

        CREATE TABLE heartbeat_series_version9 (
            anchor INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL UNIQUE,
            start_us INTEGER NOT NULL,
            end_us INTEGER NOT NULL,
            beat_count INTEGER NOT NULL,
            device_id INTEGER REFERENCES devices (id),
            sync_identifier TEXT,
            sync_version INTEGER,
            metadata_set_id INTEGER REFERENCES metadata_sets (id)
        );
        INSERT INTO heartbeat_series_version9 (anchor, uuid, start_us, end_us, beat_count, device_id, sync_identifier,
            sync_version, metadata_set_id)
        SELECT c.anchor, h.uuid, h.start_us, h.end_us, h.beat_count, h.device_id, h.sync_identifier, h.sync_version,
            h.metadata_set_id
        FROM heartbeat_series h JOIN changes c ON c.uuid = h.uuid AND c.deleted_us IS NULL ORDER BY c.anchor;

        CREATE TABLE workouts_version9 (
            anchor INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL UNIQUE,
            activity_type TEXT NOT NULL,
            start_us INTEGER NOT NULL,
            end_us INTEGER NOT NULL,
            duration REAL NOT NULL,
            sync_identifier TEXT,
            sync_version INTEGER,
            metadata_set_id INTEGER REFERENCES metadata_sets (id)
        );
        INSERT INTO workouts_version9 (anchor, uuid, activity_type, start_us, end_us, duration, sync_identifier,
            sync_version, metadata_set_id)
        SELECT c.anchor, w.uuid, w.activity_type, w.start_us, w.end_us, w.duration, w.sync_identifier, w.sync_version,
            w.metadata_set_id
        FROM workouts w JOIN changes c ON c.uuid = w.uuid AND c.deleted_us IS NULL ORDER BY c.anchor;

        CREATE TABLE tombstones (
            anchor INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL UNIQUE,
            kind TEXT NOT NULL CHECK (kind IN ('quantity', 'correlation', 'heartbeatSeries', 'workout')),
            type TEXT NOT NULL,
            deleted_us INTEGER NOT NULL
        );
        CREATE INDEX tombstones_deleted ON tombstones (deleted_us);
        INSERT INTO tombstones (anchor, uuid, kind, type, deleted_us)
        SELECT anchor, uuid, kind, type, deleted_us FROM changes WHERE deleted_us IS NOT NULL ORDER BY anchor;

        -- Every object must have carried a change row; a temporary table tells the Swift half.
        CREATE TEMP TABLE version9_counts AS SELECT
            (SELECT count(*) FROM samples) - (SELECT count(*) FROM samples_version9)
            + (SELECT count(*) FROM correlations) - (SELECT count(*) FROM correlations_version9)
            + (SELECT count(*) FROM heartbeat_series) - (SELECT count(*) FROM heartbeat_series_version9)
            + (SELECT count(*) FROM workouts) - (SELECT count(*) FROM workouts_version9)
            + (SELECT count(*) FROM correlation_members) - (SELECT count(*) FROM correlation_members_version9)
            AS missing;
        """

    /// The second half of version 9: the old tables replaced by the new, their indexes and views.
    static let version9Swap = """
        DROP TABLE samples;
        DROP TABLE correlation_members;
        DROP TABLE correlations;
        DROP TABLE heartbeat_series;
        DROP TABLE workouts;
        DROP TABLE changes;
        ALTER TABLE samples_version9 RENAME TO samples;
        ALTER TABLE correlations_version9 RENAME TO correlations;
        ALTER TABLE correlation_members_version9 RENAME TO correlation_members;
        ALTER TABLE heartbeat_series_version9 RENAME TO heartbeat_series;
        ALTER TABLE workouts_version9 RENAME TO workouts;

        CREATE UNIQUE INDEX samples_type_start ON samples (type_id, start_us, uuid);
        CREATE INDEX correlations_type_start ON correlations (type, start_us);
        CREATE UNIQUE INDEX correlations_sync ON correlations (sync_identifier) WHERE sync_identifier IS NOT NULL;
        CREATE INDEX correlation_members_sample ON correlation_members (sample_anchor);
        CREATE INDEX heartbeat_series_start ON heartbeat_series (start_us);
        CREATE INDEX heartbeat_series_end ON heartbeat_series (end_us);
        CREATE UNIQUE INDEX heartbeat_series_sync ON heartbeat_series (sync_identifier) WHERE sync_identifier IS NOT NULL;
        CREATE INDEX workouts_start ON workouts (start_us);
        CREATE UNIQUE INDEX workouts_sync ON workouts (sync_identifier) WHERE sync_identifier IS NOT NULL;

        -- Human-readable views for the sqlite3 command-line shell.
        -- samples_readable has every column of a sample with its type and unit spelled out: what
        -- version 8's samples table had (type, unit, start_us, end_us, device_id, …), for scripts.
        CREATE VIEW samples_readable AS
            SELECT s.anchor, lower(hex(s.uuid)) AS uuid, t.identifier AS type, s.value, u.unit,
                ifnull(s.original_value, s.value) AS original_value,
                strftime('%Y-%m-%dT%H:%M:%fZ', s.start_us / 1000000.0, 'unixepoch') AS start,
                strftime('%Y-%m-%dT%H:%M:%fZ', (s.start_us + s.duration_us) / 1000000.0, 'unixepoch') AS "end",
                d.name AS device, s.start_us, s.start_us + s.duration_us AS end_us, s.device_id, s.metadata_set_id
            FROM samples s JOIN quantity_types t ON t.id = s.type_id JOIN units u ON u.id = s.unit_id
                LEFT JOIN devices d ON d.id = s.device_id;
        CREATE VIEW workouts_readable AS
            SELECT anchor, lower(hex(uuid)) AS uuid, activity_type,
                strftime('%Y-%m-%dT%H:%M:%fZ', start_us / 1000000.0, 'unixepoch') AS start,
                strftime('%Y-%m-%dT%H:%M:%fZ', end_us / 1000000.0, 'unixepoch') AS "end", duration
            FROM workouts;
        CREATE VIEW metadata_readable AS
            SELECT 'sample' AS record, lower(hex(r.uuid)) AS uuid, e.key, e.value_type, e.value
                FROM samples r JOIN metadata_entries e ON e.set_id = r.metadata_set_id
            UNION ALL
            SELECT 'correlation', lower(hex(r.uuid)), e.key, e.value_type, e.value
                FROM correlations r JOIN metadata_entries e ON e.set_id = r.metadata_set_id
            UNION ALL
            SELECT 'heartbeat_series', lower(hex(r.uuid)), e.key, e.value_type, e.value
                FROM heartbeat_series r JOIN metadata_entries e ON e.set_id = r.metadata_set_id
            UNION ALL
            SELECT 'workout', lower(hex(r.uuid)), e.key, e.value_type, e.value
                FROM workouts r JOIN metadata_entries e ON e.set_id = r.metadata_set_id;
        """

    /// Takes a version-8 file to version 9 inside the migration's transaction (see ``version9``):
    /// the SQL up to the copies of the tables, then each synced sample's identifier and version
    /// into its metadata set, then the rest. Fails, so that the step rolls back, when an object
    /// had no change row to take its anchor from.
    static func migrateToVersion9(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute(version9)
        let missing = try connection.query("SELECT missing FROM temp.version9_counts").first?.integer(0) ?? 0
        try connection.execute("DROP TABLE temp.version9_counts")
        guard missing == 0 else {
            throw SQLiteError(
                .error, message: "\(missing) object\(missing == 1 ? "" : "s") \(missing == 1 ? "has" : "have") no row in the change log, so they have no anchor to keep; "
                    + "the file stays at version 8", context: "migration 9")
        }
        var interner = MetadataSetInterner()
        var reader = MetadataReader(path: connection.path, setsExtend: false)
        for row in try connection.query(
            """
            SELECT y.sync_identifier, y.sync_version, s.anchor, s.metadata_set_id
            FROM sample_sync y JOIN samples_version9 s ON s.anchor = y.anchor
            """)
        {
            guard let identifier = row.text(0), let version = row.integer(1), let anchor = row.integer(2) else { continue }
            var metadata: Metadata
            do {
                metadata = try reader.metadata(row.values[3], connection)
            } catch {
                throw SQLiteError(.error, message: error.message, context: "migration 9")
            }
            metadata.syncIdentifier = identifier
            metadata.syncVersion = version
            let set = try interner.id(of: metadata, in: connection)
            try connection.run(
                "UPDATE samples_version9 SET metadata_set_id = ?1 WHERE anchor = ?2", [.integer(set), .integer(anchor)])
        }
        try connection.execute(version9Swap)
    }

    /// Records, in `anchors.purged_through`, the greatest anchor among the tombstones that
    /// ``deletePurgedTombstones`` deletes (its two parameters). Run it first, in the same transaction: a client whose anchor is below
    /// `purged_through` may have missed a deletion (`StoreError.Code.anchorExpired`).
    static let recordPurgedAnchor = """
        UPDATE anchors SET purged_through = max(purged_through,
            ifnull((SELECT max(anchor) FROM tombstones WHERE deleted_us < ?1 AND anchor <= ?2), 0))
        """

    /// Deletes the tombstones deleted before a time (?1, µs since 1970) at or below an anchor
    /// (?2, the followers' slowest cursor).
    static let deletePurgedTombstones = "DELETE FROM tombstones WHERE deleted_us < ?1 AND anchor <= ?2"
}
