// Version 10: the store is the log every remote sink follows.
//
// - `followers`: one row per remote sink (an HTTP repository, an MQTT broker), by its instance
//   name: the anchor through which the receiver acknowledged the change log (`anchor`), and how
//   many changes it skipped because its backlog outgrew its retention bounds (`skipped`). A
//   follower's cursor is committed in the store, never in a file of its own.
// - `log_commits`: one row per committed transaction that changed the log while followers exist:
//   its last anchor, when it committed and an estimate of the bytes its changes take in the
//   store. A follower's backlog (bytes, age) is read from here; rows every follower has passed
//   are deleted.
// - `follower_batches`: the anchor ranges a follower has sent, or is sending, beyond its cursor,
//   committed before the first attempt, so that after a crash each batch is rebuilt from the
//   same range and sent again as the same request.
// - `dead_letters`: changes a receiver refused one by one (bisected down to the one record),
//   with the receiver's answer and the record's HealthJSON, so that `healthgate dead-letters
//   retry` can send it again even after the store pruned it.
extension StoreSchema {
    static let version10 = """
        CREATE TABLE followers (
            name TEXT NOT NULL PRIMARY KEY,
            anchor INTEGER NOT NULL,
            skipped INTEGER NOT NULL DEFAULT 0,
            updated_us INTEGER NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE follower_batches (
            follower TEXT NOT NULL,
            after INTEGER NOT NULL,
            through INTEGER NOT NULL,
            PRIMARY KEY (follower, after)
        ) WITHOUT ROWID;

        CREATE TABLE log_commits (
            last_anchor INTEGER PRIMARY KEY,
            committed_us INTEGER NOT NULL,
            bytes INTEGER NOT NULL
        );

        CREATE TABLE dead_letters (
            id INTEGER PRIMARY KEY,
            follower TEXT NOT NULL,
            uuid BLOB NOT NULL,
            kind TEXT NOT NULL,
            type TEXT NOT NULL,
            deleted INTEGER NOT NULL,
            anchor INTEGER NOT NULL,
            payload BLOB,
            status INTEGER NOT NULL,
            response TEXT NOT NULL,
            failed_us INTEGER NOT NULL,
            retry INTEGER NOT NULL DEFAULT 0,
            UNIQUE (follower, uuid)
        );
        """
}
