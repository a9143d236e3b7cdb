public import SQLite

/// Why the SQLite store could not read or write, with the database path and SQLite's own message.
///
/// A struct with a nested ``Code`` (not an enum) so that codes can be added without breaking
/// callers that switch over them.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        /// The database file does not exist.
        public static let notFound = Code(name: "not found")
        /// The file is not a healthgate store (no schema version) or not a database at all.
        public static let notAStore = Code(name: "not a healthgate store")
        /// The file was written by a newer healthgate with a schema this program does not know.
        public static let schemaTooNew = Code(name: "schema too new")
        /// SQLITE_FULL: the disk, or the database's size limit, is full. Nothing of the failed
        /// transaction was written; retry after freeing space.
        public static let diskFull = Code(name: "disk full")
        /// SQLITE_IOERR or SQLITE_CANTOPEN: the operating system failed a read or write.
        public static let ioError = Code(name: "I/O error")
        /// SQLITE_BUSY or SQLITE_LOCKED outlasted the busy timeout.
        public static let busy = Code(name: "busy")
        /// SQLITE_CORRUPT or SQLITE_NOTADB.
        public static let corrupt = Code(name: "corrupt")
        /// SQLITE_READONLY: the file or its directory is not writable.
        public static let readOnly = Code(name: "read-only")
        /// A query argument is out of range (a non-positive interval, a negative limit).
        public static let invalidArgument = Code(name: "invalid argument")
        /// A stored row cannot be turned back into a model value (an unknown type, a bad unit).
        public static let invalidData = Code(name: "invalid stored data")
        /// The file's schema predates what the query needs, and a read-only store cannot upgrade
        /// it; the gateway (or `healthgate delete`) upgrades it when it next opens the file.
        public static let schemaTooOld = Code(name: "schema too old")
        /// An anchor below the oldest one the change log still answers for: tombstones after it
        /// have been purged, so the client must read everything again (from anchor 0).
        public static let anchorExpired = Code(name: "anchor expired")
        /// An anchor greater than any this store has handed out: it comes from another store
        /// (or one that was recreated).
        public static let unknownAnchor = Code(name: "unknown anchor")
        /// The objects are in use: a workout in progress collects them.
        public static let inUse = Code(name: "in use")
        /// The store was closed (``HealthStore/close()``): a stopping gateway's late question.
        public static let closed = Code(name: "closed")
        /// Any other SQLite failure.
        public static let sqlite = Code(name: "SQLite error")

        /// The code's name, as shown in messages.
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// The database file.
    public var path: String
    /// What went wrong, in words.
    public var message: String
    /// SQLite's extended result code, when SQLite reported the failure.
    public var sqliteCode: Int32?

    /// Creates an error about the database at `path`.
    public init(_ code: Code, path: String, message: String, sqliteCode: Int32? = nil) {
        self.code = code
        self.path = path
        self.message = message
        self.sqliteCode = sqliteCode
    }

    /// Maps a SQLite error to a store error, keeping the result code and message.
    public init(_ error: SQLiteError, path: String) {
        let code: Code = switch error.primaryResultCode {
        case .full: .diskFull
        case .ioError, .cantOpen: .ioError
        case .busy, .locked: .busy
        case .corrupt, .notADatabase: .corrupt
        case .readOnly: .readOnly
        case .misuse: .closed
        default: .sqlite
        }
        let hint = code == .diskFull
            ? "; the transaction was rolled back, free space (or raise maxDatabaseMegabytes) and it is retried" : ""
        self.init(code, path: path, message: "\(error.message) (SQLite code \(error.code), in \(error.context))\(hint)",
                  sqliteCode: error.code)
    }

    /// Maps any error thrown inside a store operation.
    static func wrap(_ error: any Error, path: String) -> StoreError {
        switch error {
        case let error as StoreError: error
        case let error as SQLiteError: StoreError(error, path: path)
        default: StoreError(.sqlite, path: path, message: "\(error)")
        }
    }

    /// `PATH: CODE: MESSAGE`, for logs and the CLI.
    public var description: String { "\(path): \(code): \(message)" }
}
