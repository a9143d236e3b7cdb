internal import CSQLite

/// An error from SQLite, with the result code, the message, and the SQL or path involved.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The extended result code (sqlite3_extended_errcode).
    public var code: Int32
    /// SQLite's message (sqlite3_errmsg), or this module's.
    public var message: String
    /// The statement or file the error concerns.
    public var context: String
    /// Why this module refused an operation for which SQLite itself has no error (its code is
    /// then SQLITE_ERROR), so that a caller can tell it apart without reading the message; nil
    /// for SQLite's own errors.
    public var refusal: Refusal?

    /// An error with the result code as SQLite returned it.
    public init(code: Int32, message: String, context: String) {
        self.code = code
        self.message = message
        self.context = context
    }

    /// An error with a named result code; `refusal` says why this module refused, when it did.
    public init(_ code: ResultCode, message: String, context: String, refusal: Refusal? = nil) {
        self.init(code: code.rawValue, message: message, context: context)
        self.refusal = refusal
    }

    /// The primary result code (the low byte of the extended code).
    public var primaryCode: Int32 { code & 0xFF }
    /// The primary result code, by name.
    public var primaryResultCode: ResultCode { ResultCode(rawValue: primaryCode) }
    /// SQLITE_FULL: the disk or the database's size limit is full.
    public var isDiskFull: Bool { primaryResultCode == .full }
    /// SQLITE_BUSY or SQLITE_LOCKED: another connection holds a lock longer than the timeout.
    public var isBusy: Bool { primaryResultCode == .busy || primaryResultCode == .locked }
    /// SQLITE_CONSTRAINT.
    public var isConstraint: Bool { primaryResultCode == .constraint }

    /// `SQLite error CODE (MESSAGE) in CONTEXT`, for logs.
    public var description: String { "SQLite error \(code) (\(message)) in \(context)" }
}

extension SQLiteError {
    /// A SQLite result code by name (https://sqlite.org/rescode.html), taken from `sqlite3.h`:
    /// the codes this program creates or tells apart. A struct, not an enum, because SQLite
    /// answers with codes (extended ones above all) that no list here names.
    public struct ResultCode: RawRepresentable, Hashable, Sendable {
        /// The code as SQLite returns it.
        public var rawValue: Int32

        /// The code with this value.
        public init(rawValue: Int32) {
            self.rawValue = rawValue
        }

        /// SQLITE_ERROR: a generic error (bad SQL, or a check of this program's failed).
        public static let error = ResultCode(rawValue: SQLITE_ERROR)
        /// SQLITE_BUSY: another connection holds the lock.
        public static let busy = ResultCode(rawValue: SQLITE_BUSY)
        /// SQLITE_LOCKED: a conflict inside one connection (or a shared cache).
        public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
        /// SQLITE_READONLY: the database cannot be written.
        public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
        /// SQLITE_IOERR: the operating system failed a read or write.
        public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
        /// SQLITE_CORRUPT: the database file is damaged.
        public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
        /// SQLITE_FULL: the disk, or the database's size limit, is full.
        public static let full = ResultCode(rawValue: SQLITE_FULL)
        /// SQLITE_CANTOPEN: the file (or a directory for it) cannot be opened or created.
        public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
        /// SQLITE_MISUSE: the connection was used after it was closed.
        public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
        /// SQLITE_CONSTRAINT: a constraint (unique, foreign key, check) failed.
        public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
        /// SQLITE_MISMATCH: a value of the wrong type.
        public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
        /// SQLITE_NOTADB: the file is not a database.
        public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    }

    /// Why this module refused an operation SQLite itself would have run (see
    /// ``SQLiteError/refusal``). A struct with named values, not an enum, so that refusals
    /// can be added without breaking callers that switch over them.
    public struct Refusal: Hashable, Sendable, CustomStringConvertible {
        let name: String

        /// ``SQLiteConnection/migrate(_:)-([SQLiteMigration])`` met a file whose schema version
        /// is beyond the migrations it was given: a newer program wrote it.
        public static let schemaTooNew = Refusal(name: "schema too new")

        /// The refusal's name.
        public var description: String { name }
    }
}
