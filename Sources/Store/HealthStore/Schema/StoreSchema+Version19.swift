// Version 19: the readings stored before attribution get their person (issue 65).
//
// Version 18 attributes every reading the gateway stores from then on; the readings of earlier
// versions carry no `healthgate.person`. The background migration's step `attribution`
// (RecordWriter+Attribution's migration) attributes them in bounded batches, from what the store
// knows held then: the wear intervals (version 18 made one of each assignment that held at the
// upgrade, from when it was made) and the participants' workouts (while one ran, its devices were
// its participant's). A reading whose time lies in exactly one person's interval for its device
// becomes theirs; any other stays unattributed, never guessed. The readings stay at their
// anchors: a follower that sent one does not send it again (`participant attribute` sends a
// correction).
//
// A store with nothing to attribute, or with no interval and no participant's workout, has no
// such step. `store_migrations.through` bounds a step to the anchors that existed when it began (NULL for
// the steps of version 15): the readings written since were attributed as they were stored.
extension StoreSchema {
    static let version19 = """
        ALTER TABLE store_migrations ADD COLUMN through INTEGER;
        INSERT INTO store_migrations (step, total, done, started_us, through)
            SELECT 'attribution', total, 0, CAST(strftime('%s', 'now') AS INTEGER) * 1000000, ifnull((SELECT latest FROM anchors), 0)
            FROM (SELECT (SELECT count(*) FROM samples) + (SELECT count(*) FROM quantity_series)
                    + (SELECT count(*) FROM correlations) + (SELECT count(*) FROM heartbeat_series) AS total)
            -- Only when there is something to attribute and something is known of who wore what.
            WHERE total > 0 AND (EXISTS (SELECT 1 FROM wear_intervals) OR EXISTS (
                SELECT 1 FROM workouts w JOIN metadata_set_entries e ON e.set_id = w.metadata_set_id
                WHERE e.key = 'healthgate.participant'));
        """
}
