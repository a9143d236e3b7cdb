// Version 4: the workout in progress lives in the store.
//
// A workout that has started but is not stored yet is its definition (`live_workouts`) and the
// commands acknowledged so far (`live_workout_events`, one row per command, in order: prepare,
// start, pause, resume, lap, …, end). Each row is committed before the command is answered, so a
// crash loses no acknowledged command. Its samples are not listed: they are the committed samples
// of its types and devices in its running intervals, read back with the `samples_type_start` and
// `heartbeat_series_end` indexes when the workout is restored or ended. When the finished workout
// is written to `workouts`, the same transaction deletes its `live_workouts` row (and its
// events, by cascade), so the two never both hold it and never both miss it.
extension StoreSchema {
    static let version4 = """
        CREATE TABLE live_workouts (
            uuid BLOB NOT NULL PRIMARY KEY,
            activity_type TEXT NOT NULL,
            first_activity_uuid BLOB NOT NULL,
            -- JSON array of local identifiers or names; NULL: every device.
            devices TEXT,
            -- JSON array of quantity type identifiers.
            types TEXT NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE live_workout_events (
            workout_uuid BLOB NOT NULL REFERENCES live_workouts (uuid) ON DELETE CASCADE,
            entry_index INTEGER NOT NULL,
            action TEXT NOT NULL,
            at_us INTEGER NOT NULL,
            -- beginActivity: the activity begun.
            activity_uuid BLOB,
            activity_type TEXT,
            -- segment: where it begins.
            segment_start_us INTEGER,
            -- The event's metadata as JSON (a marker's note); NULL when empty.
            metadata TEXT,
            PRIMARY KEY (workout_uuid, entry_index)
        ) WITHOUT ROWID;

        -- Heartbeat series are matched to workouts by overlap: the series that end after a
        -- workout started.
        CREATE INDEX heartbeat_series_end ON heartbeat_series (end_us);
        """
}
