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
/// A set holding the keys the gateway stamps on every record of a run and entries of its own
/// is stored as its own entries extending the run's set (``StoreSchema/runKeys``, schema
/// version 16), and a set holding keys that belong to one record besides others as those keys
/// extending the others' set (``StoreSchema/objectKeys``, version 17): a set unique to its
/// record costs its own entries only.
///
/// Two caches, so that sets that never come back do not take the room (and the memory) of
/// those that do: a set met for the first time is kept among the ``newcomerLimit`` newcomers,
/// and moves to the ``recurringLimit`` recurring sets when it is met again. A set unique to its
/// record (an HRV sample's: its sync identifier and its heartbeat series' id, two per series of
/// each strap with RR intervals) only ever passes through the
/// newcomers, which are emptied when full; with one cache, each stayed until 4096 had
/// accumulated: the RSS growth of a class that rose with its samples (Benchmarks/RESULTS.md,
/// `class`).
///
/// Not thread-safe; owned by one writer (or one migration), on the connection's thread. Call
/// ``commit()`` or ``rollback()`` after every transaction it was used in (see ``RowIDCache``).
struct MetadataSetInterner {
    /// The most recurring sets kept: far more than the sets a gateway's devices produce (each
    /// device sends a few, and a gateway serves at most a few thousand devices), so the steady
    /// state never misses.
    static let recurringLimit = 4096
    /// The most sets met once kept: a set that recurs comes back within a few batches (the
    /// same device's next reading), long before this many other new sets arrive.
    static let newcomerLimit = 256

    private var ids = RowIDCache<CanonicalKey>(limit: MetadataSetInterner.recurringLimit)
    private var newcomers = RowIDCache<CanonicalKey>(limit: MetadataSetInterner.newcomerLimit)
    private var canonical = CanonicalKey()
    private var scratch: [(key: MetadataKey, value: MetadataValue)] = []
    /// The set ``id(of:in:)`` answered last; forgotten at a rollback (its row may be gone).
    private var last: Last?

    /// The id of the stored set holding exactly `entries`, inserted (with its entries) if absent.
    /// `entries` must not be empty, and is stored as given (for a record whose table keeps the
    /// sync keys in columns, leave them out first; see ``StoreSchema/storedEntries(of:)``).
    mutating func id(of entries: Metadata, in connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
        // The same set as the record before (a run of one device's readings, whose metadata
        // often shares its storage: equal at once), without encoding it again.
        if let previous = last, previous.entries == entries {
            // Met again: looked up once more, which makes it a recurring set, as before.
            if !previous.repeated {
                last?.repeated = true
                _ = try lookUp(entries, in: connection)
            }
            return previous.id
        }
        let id = try lookUp(entries, in: connection)
        last = Last(entries: entries, id: id, repeated: false)
        return id
    }

    /// The set ``id(of:in:)`` answered last: its entries and id, and whether it was asked for
    /// again since.
    private struct Last {
        var entries: Metadata
        var id: Int64
        var repeated: Bool
    }

    private mutating func lookUp(_ entries: Metadata, in connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
        canonical.bytes.removeAll(keepingCapacity: true)
        StoreSchema.appendCanonicalEncoding(of: entries, to: &canonical.bytes, sorting: &scratch)
        if let id = ids[canonical] { return id }
        if let id = newcomers[canonical] {
            // Met again: it recurs.
            ids.insert(id, for: canonical)
            return id
        }
        // The full set's encoding is the caches' key; a set with shared entries and its own is
        // stored as its own entries extending the shared entries' set (found or stored the same
        // way: a record's object keys extend its device's set, which extends the run's).
        let full = canonical
        let setID: Int64
        if let (shared, own) = StoreSchema.extensionSplit(entries) {
            let parent = try lookUp(shared, in: connection)
            var stored: [UInt8] = []
            StoreSchema.appendCanonicalEncoding(of: own, extending: parent, to: &stored, sorting: &scratch)
            setID = try find(stored, entries: own, parent: parent, in: connection)
        } else {
            setID = try find(full.bytes, entries: entries, parent: nil, in: connection)
        }
        newcomers.insert(setID, for: full)
        return setID
    }

    /// The id of the stored set with the canonical encoding `bytes`, inserted with `entries` (and
    /// `parent`) when absent.
    private func find(_ bytes: [UInt8], entries: Metadata, parent: Int64?, in connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
        let key = SQLiteValue.blob(bytes)
        if let found = try connection.query(StoreSchema.selectMetadataSet, [key]).first?.integer(0) { return found }
        if let parent {
            try connection.run(StoreSchema.insertExtendingMetadataSet, [key, .integer(parent)])
        } else {
            try connection.run(StoreSchema.insertMetadataSet, [key])
        }
        let id = connection.lastInsertRowID
        let insert = try connection.statement(StoreSchema.insertMetadataEntry)
        for (name, value) in entries.values {
            insert.bind(id, at: 1)
            insert.bind(name.rawValue, at: 2)
            StoreSchema.bind(value, to: insert, typeAt: 3)
            try insert.runAndReset()
        }
        return id
    }

    /// How many sets the caches hold (recurring and newcomers): at most
    /// ``recurringLimit`` + ``newcomerLimit``.
    var cachedCount: Int { ids.count + newcomers.count }

    /// How many recurring sets the cache holds (met at least twice since they were cached).
    var recurringCount: Int { ids.count }

    /// Whether the set holding exactly `entries` is among the recurring sets (answered without SQL).
    mutating func isRecurring(_ entries: Metadata) -> Bool {
        canonical.bytes.removeAll(keepingCapacity: true)
        StoreSchema.appendCanonicalEncoding(of: entries, to: &canonical.bytes, sorting: &scratch)
        return ids[canonical] != nil
    }

    /// The transaction committed; see ``RowIDCache/commit()``.
    mutating func commit() {
        ids.commit()
        newcomers.commit()
    }

    /// The transaction rolled back; see ``RowIDCache/rollback()``.
    mutating func rollback() {
        last = nil
        ids.rollback()
        newcomers.rollback()
    }
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
