import AsyncPrimitives
import FoundationEssentials
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// A ``SQLiteConnection`` confined to one serial queue, usable from async code.
///
/// An actor whose executor is a serial `DispatchQueue` (``AsyncPrimitives/QueueExecutor``): every
/// ``perform(_:)`` runs on that queue, so `sqlite3_step` never blocks the cooperative thread
/// pool, and the compiler checks that nothing else touches the connection (GRDB's
/// SerializedDatabase, with the isolation checked).
public actor SQLiteDatabase {
    private let executor: QueueExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// Nil once ``close()`` has run: every later ``perform(_:)`` throws.
    private var connection: SQLiteConnection?
    private let interruptHandle: SQLiteInterruptHandle
    /// The database file.
    public nonisolated let path: String

    /// Opens the database at `path`, creating parent directories in `.readWrite` mode, and runs
    /// `prepare` on the new connection before anything else can reach it (a migration, a check
    /// of the schema version).
    ///
    /// Opening blocks the calling thread (the file is opened, and in `.readWrite` mode switched
    /// to WAL, retrying while another connection creates the file): from async code, call it
    /// through ``AsyncPrimitives/QueueExecutor/run(_:)``, never on the cooperative pool.
    public static func opening<Prepared: Sendable>(
        path: String, mode: SQLiteConnection.Mode = .readWrite, label: String = "sqlite",
        prepare: (SQLiteConnection) throws -> Prepared
    ) throws -> (database: SQLiteDatabase, prepared: Prepared) {
        let connection = try connect(path: path, mode: mode)
        let prepared = try prepare(connection)
        return (SQLiteDatabase(connection: connection, path: path, label: label), prepared)
    }

    /// ``opening(path:mode:label:prepare:)`` without a preparation step.
    public init(path: String, mode: SQLiteConnection.Mode = .readWrite, label: String = "sqlite") throws(SQLiteError) {
        self.init(connection: try Self.connect(path: path, mode: mode), path: path, label: label)
    }

    private static func connect(path: String, mode: SQLiteConnection.Mode) throws(SQLiteError) -> SQLiteConnection {
        if mode == .readWrite {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw SQLiteError(.cantOpen, message: "cannot create directory: \(((error as? CocoaError)?.underlying as? POSIXError).map { String(cString: strerror($0.code.rawValue)) } ?? String(describing: error))",
                                  context: directory.path)
            }
        }
        return try SQLiteConnection(path: path, mode: mode)
    }

    /// Confines an open `connection` to a new serial queue labelled `label`.
    public init(connection: sending SQLiteConnection, label: String) {
        self.init(connection: connection, path: connection.path, label: label)
    }

    private init(connection: sending SQLiteConnection, path: String, label: String) {
        self.connection = connection
        self.interruptHandle = connection.interruptHandle
        self.path = path
        self.executor = QueueExecutor(label: "healthgate.\(label)")
    }

    /// Makes the statement running on the queue, if any, fail with SQLITE_INTERRUPT: for a forced
    /// stop. Callable from any thread; the connection lives as long as this object.
    public nonisolated func interrupt() {
        interruptHandle.interrupt()
    }

    /// Runs `body` on the database's queue and returns its result.
    /// - Throws: what `body` throws, or ``SQLiteError`` (SQLITE_MISUSE) once the database is closed.
    public func perform<T: Sendable>(_ body: @Sendable (SQLiteConnection) throws -> T) throws -> T {
        try body(try open())
    }

    /// Finalizes the connection's statements and closes it, after whatever runs on the queue now;
    /// every later call throws. The last connection to a WAL file to close folds the log into the
    /// database file and removes the `-wal` and `-shm` files.
    public func close() {
        connection = nil
    }

    private func open() throws(SQLiteError) -> SQLiteConnection {
        guard let connection else {
            throw SQLiteError(.misuse, message: "the connection is closed", context: path)
        }
        return connection
    }

    /// Runs `body` on the database's queue while the calling thread waits: for a caller that
    /// runs on a serial queue of its own and must not return before the work is done (a
    /// synchronous protocol). Never call it from the cooperative pool, nor from this database's
    /// own queue (that would wait for itself).
    public nonisolated func performBlocking<T: Sendable>(_ body: @Sendable (SQLiteConnection) throws -> T) rethrows -> T {
        try executor.queue.sync {
            try self.assumeIsolated { database in try body(try database.open()) }
        }
    }
}
