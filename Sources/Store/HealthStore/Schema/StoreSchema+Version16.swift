// Version 16: metadata that costs per run, not per object (issue 64).
//
// - `metadata_sets.parent_id`: a set may extend another. The keys the gateway stamps on every
//   record of a run (``StoreSchema/runKeys``: its name, version and time zone, the source, the
//   boot and clock base) are one set, shared by every record of the run that carries them; a
//   record's own entries (its sync identifier, its heartbeat series, a device's serial number)
//   are a set of their own that names that one as its parent. Before, every distinct record
//   set repeated the shared keys: an HRV sample, unique by its sync identifier, cost a whole set
//   of a dozen entries (about 1.4 KB with its unique index), half a class's store.
// - `metadata_set_entries` lists each set's entries with its parent's: what every reader of a
//   set reads (``StoreSchema/entriesOfSet(_:)`` for one set by id).
// - `metadata_readable` lists a record's entries through it.
//
// Sets stored before this version have no parent and stay as they are.
extension StoreSchema {
    static let version16 = """
        ALTER TABLE metadata_sets ADD COLUMN parent_id INTEGER REFERENCES metadata_sets (id);

        CREATE VIEW metadata_set_entries AS
            SELECT set_id, key, value_type, value FROM metadata_entries
            UNION ALL
            SELECT s.id, e.key, e.value_type, e.value
                FROM metadata_sets s JOIN metadata_entries e ON e.set_id = s.parent_id
                WHERE s.parent_id IS NOT NULL;

        DROP VIEW metadata_readable;
        CREATE VIEW metadata_readable AS
            SELECT 'sample' AS record, lower(hex(r.uuid)) AS uuid, e.key, e.value_type, e.value
                FROM samples r JOIN metadata_set_entries e ON e.set_id = r.metadata_set_id
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
