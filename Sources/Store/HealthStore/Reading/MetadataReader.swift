import HealthModel
import SQLite

/// Reads the metadata of the records one query returns, each metadata set once: a query over
/// 100 000 samples of one device reads that device's set once, not 100 000 times.
///
/// Made per query, inside the query's read transaction, so its cache is never stale and is
/// bounded by the query's result.
struct MetadataReader {
    private let path: String
    private var sets: [Int64: Metadata] = [:]
    /// Whether a set may extend another (schema version 16 on); false for a migration that
    /// reads a file of an earlier version.
    private let setsExtend: Bool

    init(path: String, setsExtend: Bool = true) {
        self.path = path
        self.setsExtend = setsExtend
    }

    /// The entries of the set ?1 with its parent's.
    private static let ownEntries = "SELECT key, value_type, value FROM metadata_entries WHERE set_id = ?1"
    private static let entries = "SELECT key, value_type, value FROM metadata_entries WHERE \(StoreSchema.entriesOfSet("?1"))"

    /// The entries of the set `key` (a record's `metadata_set_id`), its parent's included; a
    /// NULL key is no metadata.
    /// The caller then sets the sync keys from the record's own columns, which win.
    mutating func metadata(_ key: SQLiteValue, _ connection: SQLiteConnection) throws(StoreError) -> Metadata {
        guard case .integer(let id) = key else { return Metadata() }
        if let cached = sets[id] { return cached }
        var metadata = Metadata()
        for row in try HealthStore.run(
            connection, setsExtend ? Self.entries : Self.ownEntries, [key], path: path)
        {
            guard let name = row.text(0) else { continue }
            guard let value = StoreSchema.metadataValue(valueType: row.text(1), value: row.values[2]) else {
                throw StoreError(.invalidData, path: path, message: "metadata \(name) has an invalid value")
            }
            metadata[MetadataKey(name)] = value
        }
        sets[id] = metadata
        return metadata
    }
}
