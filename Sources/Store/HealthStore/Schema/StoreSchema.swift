public import SQLite

/// The health store's schema: its migrations and the statements the writer runs.
///
/// Public so that a benchmark can create exactly the same tables as the store.
///
/// Conventions (documented in Sources/Store/HealthStore/README.md):
/// - every object's row is keyed by its anchor, an INTEGER assigned in commit order and never
///   reused (see StoreSchema+Version9.swift); its identifier is the 16 UUIDv7 bytes in a BLOB
///   (`uuid`);
/// - times are INTEGER microseconds since 1970-01-01T00:00:00Z (`start_us`; a sample's end is
///   `start_us + duration_us`);
/// - quantity values are REAL in the type's canonical unit (`value`), with the recorded unit
///   (`unit_id`) and, when it differs, the recorded value (`original_value`) beside them;
/// - metadata is stored once per distinct set (`metadata_sets`, `metadata_entries`), and records
///   point to their set (`metadata_set_id`); see ``canonicalEncoding(of:)``.
public enum StoreSchema {
    /// The schema version this program writes and reads (`PRAGMA user_version`).
    public static var version: Int { migrations.count }

    /// `migrations[v]` takes the schema from version v to v + 1. Never edit a released entry:
    /// append a new one.
    ///
    /// Versions 2, 9 and 15 are Swift code (``SQLite/SQLiteMigration/code(_:)``): moving version 1's
    /// metadata into sets needs ``canonicalEncoding(of:)``, which SQL cannot compute, version 9
    /// checks that every object kept its anchor, and version 15 drops the tables of earlier
    /// versions at once when they hold nothing to move. Run the list with
    /// ``SQLite/SQLiteConnection/migrate(_:)-([SQLiteMigration])``.
    public static let migrations: [SQLiteMigration] = [
        .sql(version1),
        .code { connection throws(SQLiteError) in try migrateToVersion2(connection) },
        .sql(version3),
        .sql(version4),
        .sql(version5),
        .sql(version6),
        .sql(version7),
        .sql(version8),
        .code { connection throws(SQLiteError) in try migrateToVersion9(connection) },
        .sql(version10),
        .sql(version11),
        .sql(version12),
        .sql(version13),
        .sql(version14),
        .code { connection throws(SQLiteError) in try migrateToVersion15(connection) },
        .sql(version16),
        .sql(version17),
        .sql(version18),
        .sql(version19),
        .sql(version20),
    ]

    // Version 1.
    //
    // `samples` is WITHOUT ROWID: the uuid primary key is then the table's only B-tree, so an insert
    // touches two B-trees (the table and samples_type_start) instead of three (rowid table, the
    // unique index on uuid, samples_type_start). Rows are about 100 bytes, far below the size at
    // which SQLite recommends ordinary rowid tables (https://sqlite.org/withoutrowid.html §4), and
    // UUIDv7 keys arrive in increasing order, so inserts append to the right-most leaf.
    static let version1 = """
        CREATE TABLE devices (
            id INTEGER PRIMARY KEY,
            name TEXT,
            manufacturer TEXT,
            model TEXT,
            hardware_version TEXT,
            firmware_version TEXT,
            software_version TEXT,
            local_identifier TEXT,
            udi_device_identifier TEXT
        );
        -- NULL and '' are different devices: ifnull maps NULL to an empty BLOB, which never equals TEXT.
        CREATE UNIQUE INDEX devices_identity ON devices (
            ifnull(name, x''), ifnull(manufacturer, x''), ifnull(model, x''),
            ifnull(hardware_version, x''), ifnull(firmware_version, x''),
            ifnull(software_version, x''), ifnull(local_identifier, x''),
            ifnull(udi_device_identifier, x''));

        CREATE TABLE samples (
            uuid BLOB NOT NULL PRIMARY KEY,
            type TEXT NOT NULL,
            value REAL NOT NULL,
            unit TEXT NOT NULL,
            original_value REAL NOT NULL,
            start_us INTEGER NOT NULL,
            end_us INTEGER NOT NULL,
            device_id INTEGER REFERENCES devices (id),
            sync_identifier TEXT,
            sync_version INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX samples_type_start ON samples (type, start_us);
        CREATE UNIQUE INDEX samples_sync ON samples (sync_identifier) WHERE sync_identifier IS NOT NULL;

        -- Metadata of samples, heartbeat series and workouts (owner_uuid is any of their uuids).
        -- syncIdentifier and syncVersion live in their owner's columns, not here.
        CREATE TABLE sample_metadata (
            owner_uuid BLOB NOT NULL,
            key TEXT NOT NULL,
            value_type TEXT NOT NULL CHECK (value_type IN ('string', 'integer', 'double', 'bool')),
            value NOT NULL,
            PRIMARY KEY (owner_uuid, key)
        ) WITHOUT ROWID;

        -- The longest sample per type, so that a range query on start_us also finds cumulative
        -- samples that started before the range but reach into it.
        CREATE TABLE sample_type_spans (
            type TEXT NOT NULL PRIMARY KEY,
            max_duration_us INTEGER NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE heartbeat_series (
            uuid BLOB NOT NULL PRIMARY KEY,
            start_us INTEGER NOT NULL,
            end_us INTEGER NOT NULL,
            beat_count INTEGER NOT NULL,
            device_id INTEGER REFERENCES devices (id),
            sync_identifier TEXT,
            sync_version INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX heartbeat_series_start ON heartbeat_series (start_us);
        CREATE UNIQUE INDEX heartbeat_series_sync ON heartbeat_series (sync_identifier)
            WHERE sync_identifier IS NOT NULL;

        CREATE TABLE heartbeats (
            series_uuid BLOB NOT NULL REFERENCES heartbeat_series (uuid) ON DELETE CASCADE,
            beat_index INTEGER NOT NULL,
            time_since_start REAL NOT NULL,
            preceded_by_gap INTEGER NOT NULL,
            PRIMARY KEY (series_uuid, beat_index)
        ) WITHOUT ROWID;

        CREATE TABLE workouts (
            uuid BLOB NOT NULL PRIMARY KEY,
            activity_type TEXT NOT NULL,
            start_us INTEGER NOT NULL,
            end_us INTEGER NOT NULL,
            duration REAL NOT NULL,
            sync_identifier TEXT,
            sync_version INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX workouts_start ON workouts (start_us);
        CREATE UNIQUE INDEX workouts_sync ON workouts (sync_identifier) WHERE sync_identifier IS NOT NULL;

        CREATE TABLE workout_events (
            workout_uuid BLOB NOT NULL REFERENCES workouts (uuid) ON DELETE CASCADE,
            event_index INTEGER NOT NULL,
            type TEXT NOT NULL,
            start_us INTEGER NOT NULL,
            end_us INTEGER NOT NULL,
            metadata TEXT,
            PRIMARY KEY (workout_uuid, event_index)
        ) WITHOUT ROWID;

        CREATE TABLE workout_activities (
            uuid BLOB NOT NULL PRIMARY KEY,
            workout_uuid BLOB NOT NULL REFERENCES workouts (uuid) ON DELETE CASCADE,
            activity_index INTEGER NOT NULL,
            activity_type TEXT NOT NULL,
            start_us INTEGER NOT NULL,
            end_us INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX workout_activities_workout ON workout_activities (workout_uuid, activity_index);

        -- Statistics of a workout (owner_uuid = workout_uuid) or of one of its activities.
        CREATE TABLE workout_statistics (
            owner_uuid BLOB NOT NULL,
            workout_uuid BLOB NOT NULL REFERENCES workouts (uuid) ON DELETE CASCADE,
            type TEXT NOT NULL,
            start_us INTEGER NOT NULL,
            end_us INTEGER NOT NULL,
            sample_count INTEGER NOT NULL,
            sum REAL,
            average REAL,
            minimum REAL,
            maximum REAL,
            most_recent REAL,
            most_recent_us INTEGER,
            PRIMARY KEY (owner_uuid, type)
        ) WITHOUT ROWID;
        CREATE INDEX workout_statistics_workout ON workout_statistics (workout_uuid);

        -- Links a workout to the quantity samples and heartbeat series it collected. The sample may
        -- arrive before or after the workout, so there is no foreign key on sample_uuid.
        CREATE TABLE workout_samples (
            workout_uuid BLOB NOT NULL REFERENCES workouts (uuid) ON DELETE CASCADE,
            sample_uuid BLOB NOT NULL,
            PRIMARY KEY (workout_uuid, sample_uuid)
        ) WITHOUT ROWID;
        CREATE INDEX workout_samples_sample ON workout_samples (sample_uuid);

        -- Human-readable views for the sqlite3 command-line shell.
        CREATE VIEW samples_readable AS
            SELECT lower(hex(s.uuid)) AS uuid, s.type, s.value, s.unit, s.original_value,
                strftime('%Y-%m-%dT%H:%M:%fZ', s.start_us / 1000000.0, 'unixepoch') AS start,
                strftime('%Y-%m-%dT%H:%M:%fZ', s.end_us / 1000000.0, 'unixepoch') AS "end",
                d.name AS device, s.sync_identifier, s.sync_version
            FROM samples s LEFT JOIN devices d ON d.id = s.device_id;
        CREATE VIEW workouts_readable AS
            SELECT lower(hex(uuid)) AS uuid, activity_type,
                strftime('%Y-%m-%dT%H:%M:%fZ', start_us / 1000000.0, 'unixepoch') AS start,
                strftime('%Y-%m-%dT%H:%M:%fZ', end_us / 1000000.0, 'unixepoch') AS "end", duration
            FROM workouts;
        """

    /// The statement that inserts one quantity sample (10 parameters, in column order: anchor,
    /// uuid, type_id, value, unit_id, original_value, start_us, duration_us, device_id,
    /// metadata_set_id). A sample with the same uuid, type and start stored already is a no-op.
    public static let insertSample = """
        INSERT INTO samples (anchor, uuid, type_id, value, unit_id, original_value, start_us, duration_us, device_id,
            metadata_set_id)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT DO NOTHING
        """

    /// Finds the metadata set with a canonical encoding (one parameter, the encoding as a BLOB).
    public static let selectMetadataSet = "SELECT id FROM metadata_sets WHERE canonical = ?1"

    /// Inserts a metadata set (one parameter: its canonical encoding, a BLOB); its id is the
    /// connection's last insert rowid. Fails on a canonical encoding already stored: look it up
    /// first with ``selectMetadataSet``.
    public static let insertMetadataSet = "INSERT INTO metadata_sets (canonical) VALUES (?1)"

    /// Inserts a metadata set that extends another (version 16): its canonical encoding
    /// (``canonicalEncoding(of:extending:)``) and its parent's id.
    static let insertExtendingMetadataSet = "INSERT INTO metadata_sets (canonical, parent_id) VALUES (?1, ?2)"

    /// Inserts one entry of a metadata set: set_id, key, value_type, value.
    public static let insertMetadataEntry = """
        INSERT INTO metadata_entries (set_id, key, value_type, value) VALUES (?1, ?2, ?3, ?4)
        """
}
