/// Row ids the writer has looked up or inserted (devices, metadata sets), by key, kept
/// consistent with rollbacks.
///
/// Every id learned inside a transaction is remembered as learned; ``commit()`` keeps them,
/// ``rollback()`` forgets exactly them. So an id of a row that a failed transaction inserted
/// never survives the rollback, while ids learned by earlier, committed transactions stay: the
/// writer never deletes devices or metadata sets, so those rows still exist.
///
/// Bounded: inserting into a cache that holds `limit` ids first empties it (the learned ones
/// too, which is always safe: forgetting only costs a lookup in the table later). A workload
/// with more distinct keys than `limit` then pays one SELECT per key each time it comes back,
/// and memory stays bounded whatever the records carry.
struct RowIDCache<Key: Hashable> {
    private var ids: [Key: Int64] = [:]
    private var learned: [Key] = []
    /// The most ids held.
    let limit: Int

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The id of `key`, if known.
    subscript(key: Key) -> Int64? { ids[key] }

    /// The number of ids held.
    var count: Int { ids.count }

    /// Remembers `id` for `key`, learned in the current transaction.
    mutating func insert(_ id: Int64, for key: Key) {
        if ids.count >= limit {
            ids.removeAll()
            learned.removeAll()
        }
        ids[key] = id
        learned.append(key)
    }

    /// The current transaction committed: what it learned is now valid for good.
    mutating func commit() {
        learned.removeAll(keepingCapacity: true)
    }

    /// The current transaction rolled back: forget what it learned.
    mutating func rollback() {
        for key in learned { ids[key] = nil }
        learned.removeAll(keepingCapacity: true)
    }
}
