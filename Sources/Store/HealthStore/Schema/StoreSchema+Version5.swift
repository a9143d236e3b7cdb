// Version 5: group workouts.
//
// A workout in progress may belong to a participant (`live_workouts.participant`; NULL for the
// gateway's own workout), so a restart gives each participant's workout back to its controller.
// Devices assigned to participants at run time (`healthgate participant assign`) are kept in
// `participant_devices`, one row per device, committed before the command answers; a restart
// replays them over the configured participants in `assigned_us` order.
extension StoreSchema {
    static let version5 = """
        ALTER TABLE live_workouts ADD COLUMN participant TEXT;

        CREATE TABLE participant_devices (
            device TEXT NOT NULL PRIMARY KEY,
            participant TEXT NOT NULL,
            assigned_us INTEGER NOT NULL
        ) WITHOUT ROWID;
        """
}
