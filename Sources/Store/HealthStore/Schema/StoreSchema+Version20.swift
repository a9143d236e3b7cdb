// Version 20: an erasure that holds (issue 77).
//
// `erasures` keeps each `participant erase`: a row with `device` NULL for the person and the
// time of the erase, and a row for each of their wear intervals the erase deleted (an interval
// still holding then ends at the erase). The writer attributes every reading it commits by the
// intervals it holds and these (RecordWriter+Attributing.swift): a reading that is the erased
// person's, dated before their erase, is not stored, whenever it arrives (a reading waiting in
// a sink's batch window, a heartbeat series' next version, a meter's stored records fetched
// later). The rows hold the person's name and device names, no reading.
//
// A tombstone keeps the deleted object's person (`person`), as it keeps its device: a remote
// sink learns whose an object was from its deletion (the `mqtt` sink removes a person's Home
// Assistant sensors once the store holds nothing of theirs of that type).
extension StoreSchema {
    static let version20 = """
        ALTER TABLE tombstones ADD COLUMN person TEXT;
        CREATE TABLE erasures (
            person TEXT NOT NULL,
            erased_us INTEGER NOT NULL,
            device TEXT,
            start_us INTEGER,
            end_us INTEGER
        );
        """
}
