// Version 12: a follower's batches keep their identity, and a receiver's pause survives a stop.
//
// - `follower_batches.batch_key`: the key the batch was first sent under. A batch sent again
//   after a stop or a crash goes out under it even when an object of its range has moved on to a
//   later version since (the rebuilt batch then lacks it), so a receiver that de-duplicates by key
//   never stores the batch's other records twice. NULL for batches begun before this version.
// - `follower_batches.acknowledged`: 1 when the follower stopped with the batch acknowledged
//   and an older one not (the cursor could not pass it). The next start does not send it again.
// - `followers.paused_until_us`: the receiver's Retry-After, on the wall clock (an HTTP date is
//   one), so that a restart sends nothing to it before that time either. NULL when not paused.
extension StoreSchema {
    static let version12 = """
        ALTER TABLE follower_batches ADD COLUMN batch_key TEXT;
        ALTER TABLE follower_batches ADD COLUMN acknowledged INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE followers ADD COLUMN paused_until_us INTEGER;
        """
}
