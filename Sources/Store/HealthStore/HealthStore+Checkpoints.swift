import FoundationEssentials
import SQLite

extension HealthStore: SourceCheckpointReader {
    /// The checkpoint stored for `key` in `namespace`, or nil.
    ///
    /// A short read (a primary-key lookup), see ``shortRead(oneStatement:_:)``.
    public func sourceCheckpoint(namespace: String, key: String) async throws(StoreError) -> SourceCheckpoint? {
        let path = self.path
        return try await shortRead(oneStatement: true) { connection throws(StoreError) in
            let rows = try Self.run(
                connection, StoreSchema.selectSourceCheckpoint, [.text(namespace), .text(key)], path: path)
            guard let payload = rows.first?.blob(0) else { return nil }
            return SourceCheckpoint(namespace: namespace, key: key, payload: Data(payload))
        }
    }

    /// ``sourceCheckpoint(namespace:key:)``, as a ``SourceCheckpointReader``.
    public func checkpoint(namespace: String, key: String) async throws -> SourceCheckpoint? {
        try await sourceCheckpoint(namespace: namespace, key: key)
    }
}
