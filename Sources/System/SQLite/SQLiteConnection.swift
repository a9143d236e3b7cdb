internal import CSQLite
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A value bound to, or read from, a statement.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// One connection to a database file. Not thread-safe: own it from one thread or serial queue,
/// or use ``SQLiteDatabase`` which does that for you.
///
/// The connection is opened in WAL mode with the ``Synchronous`` setting its opener chooses
/// (what a power cut can take from its commits) and a busy timeout, so that a writing process
/// and other readers can share the file.
public final class SQLiteConnection {
    // The handle is only used from the owning thread; see the type's documentation.
    private let handle: OpaquePointer
    public let path: String
    private var statementCache: [String: SQLiteStatement] = [:]
    /// The statements of ``statement(literal:)`` with their literal's address; each is in
    /// `statementCache` too, which finalizes them. A connection has a handful: a linear scan of
    /// addresses costs less than hashing one.
    private var literalStatements: [(address: UnsafeRawPointer, statement: SQLiteStatement)] = []
    /// Interrupts this connection from any thread (a forced stop); inert once it is closed.
    public let interruptHandle: SQLiteInterruptHandle

    /// How the file is opened.
    public enum Mode: Sendable {
        case readWrite
        case readOnly
    }

    /// When a read-write connection's commits reach stable storage (`PRAGMA synchronous`,
    /// https://sqlite.org/pragma.html#pragma_synchronous), in WAL mode.
    public enum Synchronous: String, Sendable, Hashable {
        /// Commits are not synced: they survive a crash of the process, and a power cut may
        /// take every transaction committed since the last checkpoint (in WAL mode SQLite then
        /// syncs only when it checkpoints).
        case normal = "NORMAL"
        /// Every commit syncs the WAL before it returns and before another connection can read
        /// it (SQLite's walFrames syncs the frames, then publishes them in the wal-index): a
        /// commit that returned, or that a reader saw, survives a power cut. One sync per commit.
        case full = "FULL"
    }

    /// Opens (and in `.readWrite` mode creates) the database at `path`. In `.readWrite` mode the
    /// connection takes `synchronous` before it writes anything, and the file is switched to WAL
    /// unless `writeAheadLog` is false: a caller that must first check whose file it is
    /// (switching to WAL rewrites the header) then calls ``enableWriteAheadLog()`` itself.
    /// - Throws: ``SQLiteError`` when the file cannot be opened or configured.
    public init(
        path: String, mode: Mode = .readWrite, busyTimeout: Duration = .seconds(5), writeAheadLog: Bool = true,
        synchronous: Synchronous = .normal
    ) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = (mode == .readWrite ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY)
            | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: message, context: path)
        }
        self.handle = db
        self.path = path
        self.interruptHandle = SQLiteInterruptHandle(db)
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, Int32(busyTimeout.components.seconds * 1000
            + busyTimeout.components.attoseconds / 1_000_000_000_000_000))
        self.busyTimeout = busyTimeout
        if mode == .readWrite {
            try execute("PRAGMA synchronous=\(synchronous.rawValue)")
            if writeAheadLog { try enableWriteAheadLog() }
        }
        try execute("PRAGMA foreign_keys=ON")
    }

    private let busyTimeout: Duration

    /// The connection's `synchronous` setting as SQLite reports it; nil for a value this type
    /// does not name (OFF, EXTRA).
    public var synchronous: Synchronous? {
        get throws(SQLiteError) {
            switch try query("PRAGMA synchronous").first?.integer(0) {
            case 1: .normal
            case 2: .full
            default: nil
            }
        }
    }

    /// Switches the file to WAL mode (see ``init(path:mode:busyTimeout:writeAheadLog:synchronous:)``).
    public func enableWriteAheadLog() throws(SQLiteError) {
        try enableWriteAheadLog(within: busyTimeout)
    }

    /// Switches the file to WAL mode. Changing the journal mode needs an exclusive lock, and SQLite
    /// answers SQLITE_BUSY at once, without its busy handler, when another connection is opening
    /// the same new file (a daemon and a CLI reader starting together). Retry until `timeout`.
    private func enableWriteAheadLog(within timeout: Duration) throws(SQLiteError) {
        let deadline = ContinuousClock.now + timeout
        while true {
            do throws(SQLiteError) {
                let mode = try query("PRAGMA journal_mode=WAL").first?.text(0)
                guard mode == "wal" else {
                    throw SQLiteError(.error, message: "the file stays in \(mode ?? "an unknown") journal mode, not WAL", context: path)
                }
                return
            } catch let error where error.isBusy && ContinuousClock.now < deadline {
                // This runs once per open, before the connection is used, bounded by the busy timeout
                // that every later statement would wait for too.
                usleep(5_000)
            }
        }
    }

    deinit {
        interruptHandle.invalidate()
        for statement in statementCache.values { statement.finalize() }
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(message)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: text, context: sql)
        }
    }

    /// A prepared statement for `sql`, cached per connection and reset for reuse.
    public func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statementCache[sql] {
            cached.reset()
            return cached
        }
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard rc == SQLITE_OK, let raw else {
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: lastErrorMessage, context: sql)
        }
        let statement = SQLiteStatement(handle: raw, connection: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// ``statement(_:)`` for SQL written as a literal, found by the literal's address instead of
    /// by hashing its text, which shows in a short read that runs one long statement (the newest
    /// sample with its device and metadata takes a few microseconds). The statement comes back
    /// reset with its previous bindings: the caller binds every parameter.
    public func statement(literal sql: StaticString) throws(SQLiteError) -> SQLiteStatement {
        let address = UnsafeRawPointer(sql.utf8Start)
        for entry in literalStatements where entry.address == address {
            entry.statement.rewind()
            return entry.statement
        }
        let statement = try statement(sql.description)
        literalStatements.append((address, statement))
        return statement
    }

    /// Runs `sql` with `bindings` and returns every row.
    public func query(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> [SQLiteRow] {
        let statement = try statement(sql)
        try statement.bind(bindings)
        var rows: [SQLiteRow] = []
        while try statement.step() {
            rows.append(statement.row())
        }
        return rows
    }

    /// Runs `sql` with `bindings`, ignoring any rows. Returns the number of rows changed.
    @discardableResult
    public func run(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        let statement = try statement(sql)
        try statement.bind(bindings)
        while try statement.step() {}
        return Int(sqlite3_changes(handle))
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// BEGIN and COMMIT run as cached prepared statements rather than through `sqlite3_exec`,
    /// which parses its text on every call: a read of one row (the newest sample) spends a
    /// noticeable share of its time on the two.
    public func transaction<T>(
        _ kind: TransactionKind = .immediate, _ body: () throws -> T
    ) throws -> T {
        try run(kind.begin)
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            // SQLite may have ended the transaction itself (a full disk, an I/O error), so the
            // ROLLBACK may fail; the body's error is the one that says what went wrong.
            _ = try? run("ROLLBACK")
            throw error
        }
    }

    /// BEGIN DEFERRED / IMMEDIATE / EXCLUSIVE.
    public enum TransactionKind: String, Sendable {
        case deferred = "DEFERRED", immediate = "IMMEDIATE", exclusive = "EXCLUSIVE"

        /// The statement that begins a transaction of this kind.
        var begin: String {
            switch self {
            case .deferred: "BEGIN DEFERRED"
            case .immediate: "BEGIN IMMEDIATE"
            case .exclusive: "BEGIN EXCLUSIVE"
            }
        }
    }

    /// The `user_version` pragma, used for schema versions.
    public var userVersion: Int {
        get throws(SQLiteError) {
            let rows = try query("PRAGMA user_version")
            return Int(rows.first?.integer(0) ?? 0)
        }
    }

    /// Applies `migrations[v]` for every version from the current `user_version` up, each in its own
    /// exclusive transaction that also bumps `user_version`. Migration 0 takes version 0 to 1.
    ///
    /// The version is read inside each step's exclusive transaction, so two processes opening a new
    /// file at the same moment (a daemon and a CLI reader, say) never both run the same migration:
    /// the second waits for the first's lock (busy timeout), then sees the new version and skips.
    /// A step that fails (SQL or code) is rolled back whole: the file keeps the version it had
    /// before that step, and the steps before it stay committed.
    ///
    /// Foreign keys are off while the steps run, so that a step may rebuild a table other tables
    /// point to (SQLite's procedure for schema changes, https://sqlite.org/lang_altertable.html
    /// §7): each step checks them with `PRAGMA foreign_key_check` before it commits, and fails
    /// when a row points nowhere. They are on again when this returns.
    ///
    /// - Throws: ``SQLiteError``; for a step's own failure, its error as thrown; SQLITE_ERROR
    ///   with the refusal ``SQLiteError/Refusal/schemaTooNew`` when the file's version is beyond
    ///   `migrations`; SQLITE_CONSTRAINT when a step leaves a row whose foreign key points nowhere.
    public func migrate(_ migrations: [SQLiteMigration]) throws(SQLiteError) {
        let current = try userVersion
        guard current <= migrations.count else {
            throw SQLiteError(
                .error, message: "database schema version \(current) is newer than this program "
                    + "knows (\(migrations.count)); upgrade healthgate", context: path, refusal: .schemaTooNew)
        }
        guard current < migrations.count else { return }
        // Outside any transaction: SQLite ignores the pragma inside one.
        try execute("PRAGMA foreign_keys=OFF")
        let outcome = Result { () throws(SQLiteError) in try runSteps(migrations, from: current) }
        try execute("PRAGMA foreign_keys=ON")
        try outcome.get()
    }

    private func runSteps(_ migrations: [SQLiteMigration], from current: Int) throws(SQLiteError) {
        for version in current..<migrations.count {
            do {
                try transaction(.exclusive) {
                    guard try userVersion == version else { return }
                    switch migrations[version] {
                    case .sql(let sql): try execute(sql)
                    case .code(let body): try body(self)
                    }
                    if let dangling = try query("PRAGMA foreign_key_check").first {
                        throw SQLiteError(
                            .constraint, message: "a row of \(dangling.text(0) ?? "?") (rowid \(dangling.integer(1) ?? 0)) "
                                + "points to a missing row of \(dangling.text(2) ?? "?")", context: "migration \(version + 1)")
                    }
                    try execute("PRAGMA user_version = \(version + 1)")
                }
            } catch let error as SQLiteError {
                throw error
            } catch {
                throw SQLiteError(.error, message: "\(error)", context: "migration \(version + 1)")
            }
        }
    }

    /// Applies migrations given as SQL text; see ``migrate(_:)-([SQLiteMigration])``.
    public func migrate(_ migrations: [String]) throws(SQLiteError) {
        try migrate(migrations.map(SQLiteMigration.sql))
    }

    /// The rowid of the last inserted row.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last statement.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }
    var rawHandle: OpaquePointer { handle }
}

/// A prepared statement owned by a ``SQLiteConnection``. Same threading rule as the connection.
public final class SQLiteStatement {
    private let handle: OpaquePointer
    private unowned let connection: SQLiteConnection
    public let sql: String

    init(handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    func finalize() { sqlite3_finalize(handle) }

    /// Resets the statement and clears its bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Resets the statement to run again but keeps its bindings, for callers that bind every
    /// parameter before each run (``SQLiteConnection/statement(literal:)``).
    func rewind() {
        sqlite3_reset(handle)
    }

    /// Binds values to parameters 1…n.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (index, value) in values.enumerated() {
            try bind(value, at: Int32(index + 1))
        }
    }

    /// Binds one value to parameter `index` (1-based).
    public func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .real(let v): rc = sqlite3_bind_double(handle, index, v)
        case .text(let v): rc = shim_bind_text_transient(handle, index, v, Int32(v.utf8.count))
        case .blob(let v):
            rc = v.withUnsafeBytes { shim_bind_blob_transient(handle, index, $0.baseAddress, Int32($0.count)) }
        }
        guard rc == SQLITE_OK else {
            throw SQLiteError(code: rc, message: connection.lastErrorMessage, context: sql)
        }
    }

    /// Binds an integer without boxing (hot path).
    public func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(handle, index, value)
    }

    /// Binds a double without boxing (hot path).
    public func bind(_ value: Double, at index: Int32) {
        sqlite3_bind_double(handle, index, value)
    }

    /// Binds bytes without boxing (hot path).
    public func bind(bytes: UnsafeRawBufferPointer, at index: Int32) {
        shim_bind_blob_transient(handle, index, bytes.baseAddress, Int32(bytes.count))
    }

    /// Binds bytes without copying them (SQLITE_STATIC, hot path): the caller keeps them valid
    /// until the statement is reset or the parameter rebound.
    public func bind(staticBytes bytes: UnsafeRawBufferPointer, at index: Int32) {
        sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), nil)
    }

    /// Binds NULL (hot path).
    public func bindNull(at index: Int32) {
        sqlite3_bind_null(handle, index)
    }

    /// Binds text or NULL without boxing (hot path).
    public func bind(_ value: String?, at index: Int32) {
        if let value {
            shim_bind_text_transient(handle, index, value, Int32(value.utf8.count))
        } else {
            sqlite3_bind_null(handle, index)
        }
    }

    /// Advances to the next row: true when a row is available, false when done.
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError(
                code: sqlite3_extended_errcode(connection.rawHandle), message: connection.lastErrorMessage,
                context: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows, then resets it for the next bindings.
    public func runAndReset() throws(SQLiteError) {
        while try step() {}
        sqlite3_reset(handle)
    }

    // Reading single columns of the current row, without making a ``SQLiteRow`` (hot path):
    // each follows the accessor of the same name on ``SQLiteRow``.

    /// The column as an integer: an INTEGER as is, a REAL truncated toward zero (nil outside
    /// Int64's range), nil for other values.
    public func integer(_ column: Int32) -> Int64? {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: sqlite3_column_int64(handle, column)
        case SQLITE_FLOAT: Int64(exactly: sqlite3_column_double(handle, column).rounded(.towardZero))
        default: nil
        }
    }

    /// The column as an integer, for a column the schema declares `INTEGER NOT NULL`: one call
    /// into SQLite where ``integer(_:)`` makes two (it asks the type first). A REAL reads
    /// truncated toward zero (saturating), text or a blob as SQLite converts it.
    public func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    /// The column as a double, for a column the schema declares `REAL NOT NULL`: one call into
    /// SQLite where ``double(_:)`` makes two (it asks the type first).
    public func real(_ column: Int32) -> Double {
        sqlite3_column_double(handle, column)
    }

    /// The column as a double: an INTEGER or a REAL, nil for other values.
    public func double(_ column: Int32) -> Double? {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: Double(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: sqlite3_column_double(handle, column)
        default: nil
        }
    }

    /// The column as a string when it is TEXT, nil otherwise.
    public func text(_ column: Int32) -> String? {
        guard sqlite3_column_type(handle, column) == SQLITE_TEXT, let text = sqlite3_column_text(handle, column) else {
            return nil
        }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))),
                      as: UTF8.self)
    }

    /// `body` applied to the column's bytes when it is a BLOB (valid only during the call), nil
    /// for other values.
    public func withBlob<Result>(_ column: Int32, _ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        guard sqlite3_column_type(handle, column) == SQLITE_BLOB else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return body(UnsafeRawBufferPointer(start: count == 0 ? nil : sqlite3_column_blob(handle, column), count: count))
    }

    /// The column as a ``SQLiteValue``.
    public func value(_ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT: text(column).map(SQLiteValue.text) ?? .null
        case SQLITE_BLOB: .blob(withBlob(column) { Array($0) } ?? [])
        default: .null
        }
    }

    /// The current row's columns.
    public func row() -> SQLiteRow {
        let count = sqlite3_column_count(handle)
        var values: [SQLiteValue] = []
        values.reserveCapacity(Int(count))
        for column in 0..<count {
            switch sqlite3_column_type(handle, column) {
            case SQLITE_INTEGER: values.append(.integer(sqlite3_column_int64(handle, column)))
            case SQLITE_FLOAT: values.append(.real(sqlite3_column_double(handle, column)))
            case SQLITE_TEXT:
                values.append(.text(String(cString: sqlite3_column_text(handle, column))))
            case SQLITE_BLOB:
                let count = Int(sqlite3_column_bytes(handle, column))
                if count == 0 {
                    values.append(.blob([]))
                } else if let pointer = sqlite3_column_blob(handle, column) {
                    values.append(.blob(Array(UnsafeRawBufferPointer(start: pointer, count: count))))
                } else {
                    values.append(.blob([]))
                }
            default: values.append(.null)
            }
        }
        return SQLiteRow(values: values)
    }
}

/// One result row.
public struct SQLiteRow: Sendable, Hashable {
    public var values: [SQLiteValue]

    /// The column as an integer: an INTEGER as is, a REAL truncated toward zero, nil for other
    /// values and for a REAL outside Int64's range (NaN, ±∞, beyond ±2⁶³): stored data, however
    /// odd, never traps.
    public func integer(_ column: Int) -> Int64? {
        switch values[column] {
        case .integer(let v): v
        case .real(let v): Int64(exactly: v.rounded(.towardZero))
        default: nil
        }
    }

    public func double(_ column: Int) -> Double? {
        switch values[column] {
        case .integer(let v): Double(v)
        case .real(let v): v
        default: nil
        }
    }

    public func text(_ column: Int) -> String? {
        if case .text(let v) = values[column] { return v }
        return nil
    }

    public func blob(_ column: Int) -> [UInt8]? {
        if case .blob(let v) = values[column] { return v }
        return nil
    }
}
