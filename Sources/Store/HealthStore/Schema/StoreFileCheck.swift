import SQLite

/// Whether a database file is a healthgate store this program may use: its schema version
/// (`PRAGMA user_version`) and its application id (`PRAGMA application_id`), read before
/// anything is written to it. The writer checks before it switches the file to WAL (which
/// rewrites the header) and migrates it; every reader checks before it reads.
enum StoreFileCheck {
    /// What the file must be.
    enum Requirement {
        /// A file the writer may migrate: a new one (no schema yet), or healthgate's at this
        /// program's schema version or an older one.
        case upgradable
        /// A store at exactly this program's schema version: readers never migrate.
        case current
    }

    /// The first schema version that writes ``HealthStore/applicationID`` into the header
    /// (StoreSchema+Version9.swift): an older store has none.
    static let firstVersionWithApplicationID = 9

    /// Refuses, with the file and what to do, a file that does not meet `requirement`.
    /// - Throws: ``StoreError``: `.notAStore` for another program's database (tables but no
    ///   schema version, or another application id), `.schemaTooNew` for a newer healthgate's
    ///   file, `.schemaTooOld` for an older one when `requirement` is ``Requirement/current``,
    ///   or the SQLite failure of reading the header.
    static func refuse(_ connection: SQLiteConnection, path: String, unless requirement: Requirement) throws(StoreError) {
        let version: Int
        let applicationID: Int64
        // Tables, indexes, views and triggers: only a file the writer may create a store in
        // needs the count, to tell a new file from another program's database.
        let schemaObjects: Int64
        do {
            version = try connection.userVersion
            applicationID = try connection.query("PRAGMA application_id").first?.integer(0) ?? 0
            schemaObjects = requirement == .upgradable
                ? try connection.query("SELECT count(*) FROM sqlite_schema").first?.integer(0) ?? 0 : 0
        } catch {
            throw StoreError(error, path: path)
        }
        switch requirement {
        case .upgradable:
            if version == 0, schemaObjects > 0 {
                throw StoreError(
                    .notAStore, path: path,
                    message: "the file is a SQLite database of another program (tables, no healthgate schema); "
                        + "point store.path elsewhere")
            }
            if version >= firstVersionWithApplicationID, applicationID != HealthStore.applicationID {
                throw anotherProgram(applicationID, path: path)
            }
            if version > StoreSchema.version {
                throw StoreError(
                    .schemaTooNew, path: path,
                    message: "the store has schema version \(version), newer than this healthgate's \(StoreSchema.version); "
                        + "upgrade healthgate")
            }
        case .current:
            guard version > 0 else {
                throw StoreError(.notAStore, path: path, message: "the file has no healthgate schema (user_version 0)")
            }
            guard version <= StoreSchema.version else {
                throw StoreError(
                    .schemaTooNew, path: path,
                    message: "schema version \(version) is newer than this program knows (\(StoreSchema.version)); upgrade healthgate")
            }
            guard version == StoreSchema.version else {
                throw StoreError(
                    .schemaTooOld, path: path,
                    message: "schema version \(version) was written by an older healthgate; 'healthgate run' upgrades it to "
                        + "\(StoreSchema.version) when it starts")
            }
            guard applicationID == HealthStore.applicationID else {
                throw anotherProgram(applicationID, path: path)
            }
        }
    }

    private static func anotherProgram(_ applicationID: Int64, path: String) -> StoreError {
        StoreError(
            .notAStore, path: path,
            message: "the file belongs to another program (application_id \(applicationID)); point store.path elsewhere")
    }
}
