import SQLite

// Version 15: a gym's year on the card.
//
// - `quantity_series`: the readings of the types with a series policy (heart rate, a bike's or a
//   treadmill's streams; QuantityType.seriesPolicy) as HealthKit's quantity series: one row per
//   series (a minute of one device's readings), its quantities in one blob
//   (QuantitySeriesEncoding: a few bytes each, no uuid or index entry per quantity), and beside
//   it what statistics need without the blob (count, sum, minimum, maximum, the last quantity's
//   start and value, in the type's canonical unit). `open` is 1 while the writer still adds to
//   the series (the provisional versions), `version` counts its versions. Columns that mean what
//   they mean in `samples` have the same names (`type_id`, `start_us`, `device_id`,
//   `metadata_set_id`), so one filter serves both tables.
// - `quantity_types.max_series_span_us`: the longest series of each type, from its first
//   quantity's start to its last one's, so a range query on `start_us` finds a series whose later
//   quantities reach into the range.
// - `heartbeat_series.beats`: the beats in one blob (HeartbeatEncoding) instead of a row each in
//   `heartbeats`. A series stored before this version keeps its rows until the store's
//   background migration (StoreMigration) moves them into its blob, in bounded batches; the
//   `heartbeats` table is dropped when it is empty.
// - `workout_samples` goes: a workout finds its samples and series by its time, its running
//   intervals and its devices (its metadata's device lists), as HealthKit finds a workout's
//   samples by predicate. The links of earlier versions are deleted by the same background
//   migration, in batches, and the table dropped when empty.
// - `store_migrations`: the background migration's progress, one row per step, so it resumes
//   after a kill where it stopped.
// - `tombstones.kind` admits `quantitySeries` (the table is rebuilt: SQLite cannot alter a
//   CHECK constraint), every tombstone keeping its anchor.
// - `workout_curves`: a finished workout's heart rate, power and cadence over time, condensed (a
//   point every 5 s, QuantitySeriesEncoding), written with the workout: its chart outlives the
//   raw samples that `store.retentionDays` prunes.
// - `metadata_readable` lists the metadata of quantity series too.
// - A file with nothing to move (a new store, or one without heartbeat series or links) drops
//   `heartbeats` and `workout_samples` at once and finishes those steps (migrateToVersion15).
extension StoreSchema {
    /// Takes a version-14 file to version 15 inside the migration's transaction (``version15``),
    /// then drops each table of earlier versions that holds nothing to move, finishing its
    /// background step, so that a new store has neither.
    static func migrateToVersion15(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute(version15)
        let empty = [
            ("heartbeats", "SELECT NOT EXISTS (SELECT 1 FROM heartbeat_series) AND NOT EXISTS (SELECT 1 FROM heartbeats)"),
            ("workout_samples", "SELECT NOT EXISTS (SELECT 1 FROM workout_samples)"),
        ]
        for (step, question) in empty where try connection.query(question).first?.integer(0) == 1 {
            try connection.execute("DROP TABLE \(step)")
            try connection.run("UPDATE store_migrations SET finished_us = started_us WHERE step = ?1", [.text(step)])
        }
    }

    static let version15 = """
        CREATE TABLE quantity_series (
            anchor INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL UNIQUE,
            type_id INTEGER NOT NULL,
            unit_id INTEGER NOT NULL,
            start_us INTEGER NOT NULL,
            end_us INTEGER NOT NULL,
            last_start_us INTEGER NOT NULL,
            count INTEGER NOT NULL,
            sum REAL NOT NULL,
            minimum REAL NOT NULL,
            maximum REAL NOT NULL,
            last_value REAL NOT NULL,
            device_id INTEGER,
            metadata_set_id INTEGER,
            version INTEGER NOT NULL,
            open INTEGER NOT NULL,
            quantities BLOB NOT NULL
        );
        CREATE INDEX quantity_series_type_start ON quantity_series (type_id, start_us);
        ALTER TABLE quantity_types ADD COLUMN max_series_span_us INTEGER NOT NULL DEFAULT 0;

        ALTER TABLE heartbeat_series ADD COLUMN beats BLOB;

        CREATE TABLE store_migrations (
            step TEXT NOT NULL PRIMARY KEY,
            total INTEGER NOT NULL,
            done INTEGER NOT NULL,
            position INTEGER NOT NULL DEFAULT 0,
            started_us INTEGER NOT NULL,
            finished_us INTEGER
        ) WITHOUT ROWID;
        INSERT INTO store_migrations (step, total, done, started_us)
            SELECT 'heartbeats', count(*), 0, CAST(strftime('%s', 'now') AS INTEGER) * 1000000 FROM heartbeat_series;
        INSERT INTO store_migrations (step, total, done, started_us)
            SELECT 'workout_samples', (SELECT count(*) FROM workout_samples), 0, CAST(strftime('%s', 'now') AS INTEGER) * 1000000;
        CREATE INDEX quantity_series_open ON quantity_series (type_id) WHERE open = 1;

        CREATE TABLE workout_curves (
            workout_uuid BLOB NOT NULL REFERENCES workouts (uuid) ON DELETE CASCADE,
            type_id INTEGER NOT NULL,
            unit_id INTEGER NOT NULL,
            start_us INTEGER NOT NULL,
            quantities BLOB NOT NULL,
            PRIMARY KEY (workout_uuid, type_id)
        ) WITHOUT ROWID;

        CREATE TABLE tombstones_version15 (
            anchor INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL UNIQUE,
            kind TEXT NOT NULL CHECK (kind IN ('quantity', 'quantitySeries', 'correlation', 'heartbeatSeries', 'workout')),
            type TEXT NOT NULL,
            deleted_us INTEGER NOT NULL,
            device TEXT
        );
        INSERT INTO tombstones_version15 (anchor, uuid, kind, type, deleted_us, device)
            SELECT anchor, uuid, kind, type, deleted_us, device FROM tombstones ORDER BY anchor;
        DROP TABLE tombstones;
        ALTER TABLE tombstones_version15 RENAME TO tombstones;
        CREATE INDEX tombstones_deleted ON tombstones (deleted_us);

        CREATE VIEW quantity_series_readable AS
            SELECT q.anchor, lower(hex(q.uuid)) AS uuid, t.identifier AS type, u.unit,
                strftime('%Y-%m-%dT%H:%M:%fZ', q.start_us / 1000000.0, 'unixepoch') AS start,
                strftime('%Y-%m-%dT%H:%M:%fZ', q.end_us / 1000000.0, 'unixepoch') AS "end",
                q.count, q.sum / q.count AS average, q.minimum, q.maximum, q.last_value,
                d.name AS device, q.open, q.version, length(q.quantities) AS bytes,
                q.start_us, q.end_us, q.device_id, q.metadata_set_id
            FROM quantity_series q JOIN quantity_types t ON t.id = q.type_id JOIN units u ON u.id = q.unit_id
                LEFT JOIN devices d ON d.id = q.device_id;

        DROP VIEW metadata_readable;
        CREATE VIEW metadata_readable AS
            SELECT 'sample' AS record, lower(hex(r.uuid)) AS uuid, e.key, e.value_type, e.value
                FROM samples r JOIN metadata_entries e ON e.set_id = r.metadata_set_id
            UNION ALL
            SELECT 'quantity_series', lower(hex(r.uuid)), e.key, e.value_type, e.value
                FROM quantity_series r JOIN metadata_entries e ON e.set_id = r.metadata_set_id
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
}
