public import SampleBus
import Foundation

/// Reads the source checkpoints a ``SQLiteSink`` committed, for sources resuming after a restart
/// (``SourceContext/checkpoints``).
///
/// Each read opens the file read-only beside the sink's writer (WAL: it sees the last committed
/// transaction) and closes it again: checkpoints are read when a device appears, not per
/// reading, so a connection kept open would buy nothing. Opening and reading run on serial
/// queues, never on the cooperative pool.
///
/// A file that does not exist yet, or that the sink has not yet given a schema, holds no
/// checkpoints: the result is nil. Any other failure is thrown as ``StoreError``.
public struct SQLiteCheckpointReader: SourceCheckpointReader {
    /// The database file.
    public let path: String

    /// A reader of the store at `path`.
    public init(path: String) {
        self.path = path
    }

    /// The committed checkpoint for `key` in `namespace`, or nil.
    public func checkpoint(namespace: String, key: String) async throws -> SourceCheckpoint? {
        let opened: Result<SQLiteSampleStore, StoreError>
        do {
            opened = .success(try await SQLiteSampleStore.open(path: path))
        } catch {
            opened = .failure(error)
        }
        switch opened {
        case .success(let store):
            return try await store.sourceCheckpoint(namespace: namespace, key: key)
        case .failure(let error) where error.code == .notFound || error.code == .notAStore:
            return nil
        case .failure(let error):
            throw error
        }
    }
}
