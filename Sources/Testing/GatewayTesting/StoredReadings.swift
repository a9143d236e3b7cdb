import Foundation
import SQLite

/// What a test outside the store counts in a store file while a gateway writes it (read-only, no
/// store object, so the gateway's writer is never waited for): readings of a type, whether kept as
/// samples or as quantities of series.
public enum StoredReadings {
    /// The readings of quantity type `type` from devices whose local identifier is LIKE `pattern`
    /// (SQL's LIKE: `ant:%`), as samples plus the quantities of series; 0 when there is no file.
    public static func count(of type: String, fromDevicesLike pattern: String, in database: String) throws -> Int64 {
        guard FileManager.default.fileExists(atPath: database) else { return 0 }
        let rows = try SQLiteConnection(path: database, mode: .readOnly).query(
            """
            SELECT (SELECT count(*) FROM samples s JOIN quantity_types t ON t.id = s.type_id JOIN devices d ON d.id = s.device_id
                    WHERE t.identifier = ?1 AND d.local_identifier LIKE ?2)
                + (SELECT ifnull(sum(q.count), 0) FROM quantity_series q JOIN quantity_types t ON t.id = q.type_id
                    JOIN devices d ON d.id = q.device_id WHERE t.identifier = ?1 AND d.local_identifier LIKE ?2)
            """, [.text(type), .text(pattern)])
        return rows.first?.integer(0) ?? 0
    }
}
