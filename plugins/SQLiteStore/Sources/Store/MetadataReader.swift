import HealthModel
import SQLite

/// Reads the metadata of the records one query returns, each metadata set once: a query over
/// 100 000 samples of one device reads that device's set once, not 100 000 times.
///
/// Also reads version-1 files, whose metadata is in `sample_metadata` by owner uuid: the
/// read-only ``SQLiteSampleStore`` cannot upgrade a file, and one may stay at version 1 for a
/// while (a backup, a gateway not restarted yet after an upgrade). Made per query, inside the
/// query's read transaction, so the layout it sees is the one the query reads.
struct MetadataReader {
    private enum Layout {
        /// Version 2 on: records point to a set in `metadata_entries` (`metadata_set_id`).
        case sets
        /// Version 1: entries in `sample_metadata`, keyed by their owner's uuid.
        case owners
    }

    private let layout: Layout
    private let path: String
    // Per query, so bounded by the query's result; never stale, since the query runs in one
    // read transaction.
    private var sets: [Int64: Metadata] = [:]

    /// Reads the file's schema version to pick the layout.
    init(_ connection: SQLiteConnection, path: String) throws(StoreError) {
        let version: Int
        do {
            version = try connection.userVersion
        } catch {
            throw StoreError(error, path: path)
        }
        self.layout = version >= 2 ? .sets : .owners
        self.path = path
    }

    /// The column of table (or alias) `table` to select and pass to ``metadata(_:_:)``.
    func column(of table: String) -> String {
        switch layout {
        case .sets: "\(table).metadata_set_id"
        case .owners: "\(table).uuid"
        }
    }

    /// The metadata whose key (the value of ``column(of:)``) is `key`; a NULL key is no
    /// metadata. The caller then sets the sync keys from the record's own columns, which win.
    mutating func metadata(_ key: SQLiteValue, _ connection: SQLiteConnection) throws(StoreError) -> Metadata {
        switch layout {
        case .sets:
            guard case .integer(let id) = key else { return Metadata() }
            if let cached = sets[id] { return cached }
            let metadata = try entries(
                connection, "SELECT key, value_type, value FROM metadata_entries WHERE set_id = ?1", key)
            sets[id] = metadata
            return metadata
        case .owners:
            return try entries(connection, "SELECT key, value_type, value FROM sample_metadata WHERE owner_uuid = ?1", key)
        }
    }

    private func entries(_ connection: SQLiteConnection, _ sql: String, _ key: SQLiteValue) throws(StoreError) -> Metadata {
        var metadata = Metadata()
        for row in try SQLiteSampleStore.run(connection, sql, [key], path: path) {
            guard let name = row.text(0) else { continue }
            guard let value = StoreSchema.metadataValue(valueType: row.text(1), value: row.values[2]) else {
                throw StoreError(.invalidData, path: path, message: "metadata \(name) has an invalid value")
            }
            metadata[MetadataKey(name)] = value
        }
        return metadata
    }
}
