import HealthModel
import SQLite

/// Finds or creates the `metadata_sets` row of a set of metadata entries, so that each distinct
/// set is stored once and records point to it.
///
/// The common case, a set seen before (the same few per device, interleaved across devices),
/// costs one canonical encoding into a reused buffer and one dictionary lookup: no SQL. On a
/// miss it looks the set up by its canonical encoding (a UNIQUE index) and inserts it with its
/// entries when absent.
///
/// Not thread-safe; owned by one writer (or one migration), on the connection's thread. Call
/// ``commit()`` or ``rollback()`` after every transaction it was used in (see ``RowIDCache``).
struct MetadataSetInterner {
    // 4096 ids: far more than the sets a gateway's devices produce (each device sends a few, and
    // a gateway serves at most a few thousand devices), so the steady state never misses; and a
    // bound (about 100 bytes per set) for records that carry a unique value each, such as an
    // external UUID, which would otherwise grow the cache forever.
    private var ids = RowIDCache<CanonicalKey>(limit: 4096)
    private var canonical = CanonicalKey()
    private var scratch: [(key: MetadataKey, value: MetadataValue)] = []

    /// The id of the stored set holding exactly `entries`, inserted (with its entries) if absent.
    /// `entries` must not be empty, and is stored as given (for a record whose table keeps the
    /// sync keys in columns, leave them out first; see ``StoreSchema/storedEntries(of:)``).
    mutating func id(of entries: Metadata, in connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
        canonical.bytes.removeAll(keepingCapacity: true)
        StoreSchema.appendCanonicalEncoding(of: entries, to: &canonical.bytes, sorting: &scratch)
        if let id = ids[canonical] { return id }
        let key = SQLiteValue.blob(canonical.bytes)
        let id: Int64
        if let found = try connection.query(StoreSchema.selectMetadataSet, [key]).first?.integer(0) {
            id = found
        } else {
            try connection.run(StoreSchema.insertMetadataSet, [key])
            id = connection.lastInsertRowID
            let insert = try connection.statement(StoreSchema.insertMetadataEntry)
            for (name, value) in entries.values {
                insert.bind(id, at: 1)
                insert.bind(name.rawValue, at: 2)
                StoreSchema.bind(value, to: insert, typeAt: 3)
                try insert.runAndReset()
            }
        }
        ids.insert(id, for: canonical)
        return id
    }

    /// The transaction committed; see ``RowIDCache/commit()``.
    mutating func commit() { ids.commit() }

    /// The transaction rolled back; see ``RowIDCache/rollback()``.
    mutating func rollback() { ids.rollback() }
}

/// A canonical encoding as a dictionary key. Hashes its bytes in one `combine(bytes:)` call:
/// `[UInt8]`'s own hashing feeds the hasher one byte at a time, which showed in the latency
/// benchmark's profile (about a third of the interning cost).
private struct CanonicalKey: Hashable {
    var bytes: [UInt8] = []

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
