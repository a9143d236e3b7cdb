// Version 17: a quantity sample's sync keys live in its `sample_sync` row only (issue 64).
//
// A sample with a sync identifier and a sync version (an HRV sample, a synced reading) kept both
// in its metadata set too, so each such sample had a set of its own: two sets for the SDNN and
// RMSSD of each heartbeat series, about 600 bytes each with their index and entries. Its set now
// holds the rest of its metadata (the two samples of a series share it), and readers take the
// sync keys from `sample_sync` (``RowDecoder``), which the writer filled already.
//
// - `sample_sync_anchor`: `sample_sync` by anchor, for the readers' join and the deletions by
//   anchor (retention, tombstones), which scanned the table before.
// - `metadata_readable` shows a sample's sync keys from `sample_sync` when its set does not hold
//   them.
// - A set may be three deep: the keys that belong to one record (``StoreSchema/objectKeys``: an
//   HRV sample's heartbeat series and interval count) extend the set of its other entries (its
//   strap's serial number and battery, which the strap's heart rates share), which extends the
//   run's. `metadata_set_entries` lists a set's grandparent's entries too.
//
// Sets stored before this version keep the sync keys; the readers take them from the set then.
extension StoreSchema {
    static let version17 = """
        CREATE INDEX sample_sync_anchor ON sample_sync (anchor);

        DROP VIEW metadata_readable;
        DROP VIEW metadata_set_entries;
        CREATE VIEW metadata_set_entries AS
            SELECT set_id, key, value_type, value FROM metadata_entries
            UNION ALL
            SELECT s.id, e.key, e.value_type, e.value
                FROM metadata_sets s JOIN metadata_entries e ON e.set_id = s.parent_id
                WHERE s.parent_id IS NOT NULL
            UNION ALL
            SELECT s.id, e.key, e.value_type, e.value
                FROM metadata_sets s JOIN metadata_sets p ON p.id = s.parent_id JOIN metadata_entries e ON e.set_id = p.parent_id
                WHERE p.parent_id IS NOT NULL;

        CREATE VIEW metadata_readable AS
            SELECT 'sample' AS record, lower(hex(r.uuid)) AS uuid, e.key, e.value_type, e.value
                FROM samples r JOIN metadata_set_entries e ON e.set_id = r.metadata_set_id
            UNION ALL
            SELECT 'sample', lower(hex(r.uuid)), k.key, k.value_type,
                    CASE k.key WHEN 'syncIdentifier' THEN y.sync_identifier ELSE y.sync_version END
                FROM samples r JOIN sample_sync y ON y.anchor = r.anchor
                    JOIN (SELECT 'syncIdentifier' AS key, 'string' AS value_type
                          UNION ALL SELECT 'syncVersion', 'integer') k
                WHERE NOT EXISTS (SELECT 1 FROM metadata_set_entries e
                                  WHERE e.set_id = r.metadata_set_id AND e.key = 'syncIdentifier')
            UNION ALL
            SELECT 'quantity_series', lower(hex(r.uuid)), e.key, e.value_type, e.value
                FROM quantity_series r JOIN metadata_set_entries e ON e.set_id = r.metadata_set_id
            UNION ALL
            SELECT 'correlation', lower(hex(r.uuid)), e.key, e.value_type, e.value
                FROM correlations r JOIN metadata_set_entries e ON e.set_id = r.metadata_set_id
            UNION ALL
            SELECT 'heartbeat_series', lower(hex(r.uuid)), e.key, e.value_type, e.value
                FROM heartbeat_series r JOIN metadata_set_entries e ON e.set_id = r.metadata_set_id
            UNION ALL
            SELECT 'workout', lower(hex(r.uuid)), e.key, e.value_type, e.value
                FROM workouts r JOIN metadata_set_entries e ON e.set_id = r.metadata_set_id;
        """
}
