import AsyncPrimitives
public import FoundationEssentials
import SQLite
import LinuxSystem
import Synchronization

/// The gateway's store: one SQLite database file (WAL) holding every record, the change log
/// its followers read, the source checkpoints, the workout journal and the participants.
///
/// One object per process owns the file: the executable opens it once and hands it to the
/// `sqlite` sink, the workouts, the board, the control server and every command. It has
/// - **one writer** (read-write stores only): a connection confined to its own serial queue
///   (``StoreWriter``), through which every change goes, one transaction at a time;
/// - **a small pool of read-only connections** for queries, each on its own serial queue, so a
///   long statistics query runs beside the writer and beside another query, never on Swift's
///   cooperative pool; WAL readers never block the writer;
/// - **a read-only connection for short reads** used in the caller's own context (the newest
///   sample, a checkpoint): a lookup of bounded work costs less than the hop to a queue
///   (``SQLite/SQLiteInlineReader``).
///
/// Another process may open the same file at the same time (`healthgate query`, `healthgate
/// delete` while the daemon runs): SQLite's locks serialize the writers, and the writer reads
/// the anchor sequence at the start of each transaction, so both continue one sequence.
///
/// Every failure is a typed ``StoreError`` naming the file; nothing fails silently.
public final class HealthStore: Sendable {
    /// How a store is opened.
    public enum Access: Sendable, Hashable {
        /// The writer and the readers; the file is created and migrated when needed.
        case readWrite
        /// The readers only (`healthgate query`): the file must exist at the current schema
        /// version; writing throws `.readOnly`.
        case readOnly
    }

    /// The database file.
    public let path: String
    /// How the store was opened.
    public let access: Access
    /// nil for a read-only store.
    let writer: StoreWriter?
    let readers: ReaderPool
    /// A read-only connection for short reads in the caller's context; see ``shortRead(oneStatement:_:)``.
    let inline: SQLiteInlineReader
    /// The latest anchor this process's writer committed (followers wait on it).
    let committed: AsyncCondition<Int64>
    /// What the writer's attribution did and decides by (nil for a read-only store).
    let committedAttribution: CommittedAttribution?
    /// The clock that dates commits, deletions and cursor moves (the writer's).
    let now: @Sendable () -> Date = { Date() }

    /// The `synchronous` setting of the writer's connection (`FULL`): every commit is on disk
    /// before it returns and before any reader sees it (``StoreDurability``). A program that
    /// compares itself with the store (the ingest benchmark's baseline) runs at the same setting.
    public static var synchronous: String { StoreDurability.synchronous.rawValue }

    /// The number of read-only connections queries share: a query that scans takes one for its
    /// whole read, so two let a long statistics query and a short one run side by side on a
    /// two-core board.
    public static let readerCount = 2

    /// The application id healthgate writes into the database header (`PRAGMA application_id`,
    /// https://sqlite.org/fileformat.html §1.3.12), by which it recognizes its own files: the
    /// bytes "HGAT".
    public static let applicationID: Int64 = 0x4847_4154

    /// Opens the store at `path`. Opening blocks the calling thread (files are opened, a
    /// read-write store is migrated): from async code use ``open(path:access:maximumPageCount:uptime:)``.
    /// - Parameters:
    ///   - maximumPageCount: `PRAGMA max_page_count` for the writer, a size limit in pages; nil
    ///     for SQLite's default.
    ///   - uptime: the monotonic clock on which the writer tells that a quantity series stopped
    ///     growing (``closeIdleSeries()``); nil for the process's own (`ContinuousClock`).
    /// - Throws: ``StoreError``: `.notFound` (a read-only store whose file is missing),
    ///   `.notAStore` (not a database, or another program's), `.schemaTooNew` (a newer healthgate
    ///   wrote it), `.schemaTooOld` (a read-only store below the current version: the gateway
    ///   upgrades it when it starts), `.corrupt`, `.ioError`, `.readOnly`. Nothing is written to a
    ///   file that is not a healthgate store, nor to one from a newer version.
    public init(
        path: String, access: Access = .readWrite, maximumPageCount: Int? = nil, uptime: (@Sendable () -> Duration)? = nil
    ) throws(StoreError) {
        self.path = path
        self.access = access
        let committed = AsyncCondition<Int64>(0)
        self.committed = committed
        switch access {
        case .readWrite:
            // With system calls rather than FileManager and URL, whose code would stay resident in
            // the gateway for this one call (Benchmarks/README.md, "memory").
            let directory = FileSystem.parentDirectory(of: FileSystem.absolute(path))
            let createdDirectories: [String]
            do {
                createdDirectories = try FileSystem.makeDirectories(directory)
            } catch {
                throw StoreError(.ioError, path: path, message: "cannot create the directory \(directory): \(error)")
            }
            let isNew = !FileSystem.exists(path)
            let recordWriter = try RecordWriter(
                path: path, maximumPageCount: maximumPageCount, uptime: uptime ?? RecordWriter.processUptime)
            if isNew {
                try StoreDurability.persistCreation(of: FileSystem.absolute(path), directories: createdDirectories)
            }
            recordWriter.onCommit = { [committed] anchor in committed.update { $0 = max($0, anchor) } }
            committedAttribution = recordWriter.committedAttribution
            writer = StoreWriter(writer: recordWriter)
        case .readOnly:
            guard FileManager.default.fileExists(atPath: path) else {
                throw StoreError(.notFound, path: path, message: "no database file at \(path)")
            }
            writer = nil
            committedAttribution = nil
        }
        readers = try ReaderPool(path: path, count: Self.readerCount) { connection throws(StoreError) in
            try StoreFileCheck.refuse(connection, path: path, unless: .current)
        }
        do {
            inline = try SQLiteInlineReader(path: path)
        } catch {
            throw StoreError(error, path: path)
        }
    }

    /// ``init(path:access:maximumPageCount:uptime:)`` on a queue of its own: opening blocks, so
    /// async code opens stores this way.
    public static func open(
        path: String, access: Access = .readWrite, maximumPageCount: Int? = nil, uptime: (@Sendable () -> Duration)? = nil
    ) async throws(StoreError) -> HealthStore {
        try await QueueExecutor(label: "healthgate.store.open").run { () throws(StoreError) in
            try HealthStore(path: path, access: access, maximumPageCount: maximumPageCount, uptime: uptime)
        }
    }

    /// Closes the readers, then the quantity series this store's writer was adding to, then the
    /// writer: every statement is finalized and every connection closed, so that when no other
    /// process has the file open SQLite folds the write-ahead log into the database file and
    /// removes the `-wal` and `-shm` files. Every later read or write fails with
    /// ``StoreError/Code/closed``.
    /// - Returns: the error that kept the series from being closed, if any: they stay open in
    ///   the file (nothing is lost: the next writer adds to them or closes them), and the writer
    ///   closes anyway.
    @discardableResult
    public func close() async -> StoreError? {
        inline.close()
        await readers.close()
        do {
            try await writer?.close()
            return nil
        } catch {
            return error
        }
    }

    /// How far the writer has got (calls begun and ended); nil for a read-only store. Readable
    /// from any thread without waiting for the writer.
    public var writerActivity: WriterActivity? {
        writer?.activity.withLock { $0 }
    }

    /// Makes the writer's statement in progress fail with SQLITE_INTERRUPT: for a forced stop,
    /// from any thread. A transaction interrupted is rolled back, as any failed one.
    public func interruptWriter() {
        writer?.interrupt()
    }

    // MARK: Plumbing

    /// The writer, or `.readOnly` for a store opened read-only.
    func requireWriter() throws(StoreError) -> StoreWriter {
        guard let writer else {
            throw StoreError(.readOnly, path: path, message: "the store was opened read-only")
        }
        return writer
    }

    /// Runs `body` in one read transaction on the inline reader, in the caller's context, when
    /// it is free; otherwise (another call holds it, or SQLite answers busy at once) on a
    /// reader of the pool with ``read(_:)``. A `body` that runs `oneStatement` needs no
    /// transaction of its own: SQLite's implicit one makes the statement consistent.
    ///
    /// Only for reads whose work is bounded whatever the data (a step down an index, a lookup by
    /// key): they take microseconds, less than the hop to a queue and back, and so may block the
    /// calling thread, even one of the cooperative pool, for that long. Everything that scans
    /// (statistics, ranges of samples, change logs) goes through ``read(_:)``.
    func shortRead<T: Sendable>(
        oneStatement: Bool = false, _ body: @escaping @Sendable (SQLiteConnection) throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        if let result = try inlineRead(oneStatement: oneStatement, body) { return result }
        return try await read(body)
    }

    /// The inline half of ``shortRead(oneStatement:_:)``: `body`'s result, or nil when the
    /// inline reader is taken or SQLite answers busy (the caller then reads on the pool).
    /// Synchronous and with a non-escaping `body`, so that a caller on a hot path can try it
    /// without allocating the escaping closure the queue needs.
    @inline(__always)
    func inlineRead<T: Sendable>(
        oneStatement: Bool, _ body: (SQLiteConnection) throws(StoreError) -> T
    ) throws(StoreError) -> T? {
        let path = self.path
        do throws(StoreError) {
            return try inline.readIfAvailable { connection throws(StoreError) -> T in
                if oneStatement { return try body(connection) }
                do {
                    return try connection.transaction(.deferred) { try body(connection) }
                } catch {
                    throw StoreError.wrap(error, path: path)
                }
            }
        } catch where error.code == .busy {
            // The pool's connections wait out the lock (busy timeout); the inline one must not.
            return nil
        }
    }

    /// Runs `body` in one read transaction on a reader of the pool.
    func read<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        try await readers.read(body)
    }

    /// Runs `body` in one read transaction on a reader of the pool, blocking the calling thread:
    /// for callers that live on a serial queue of their own (the workout controller), never on
    /// the cooperative pool.
    func readBlocking<T: Sendable>(_ body: @Sendable (SQLiteConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try readers.readBlocking(body)
    }

    static func run(
        _ connection: SQLiteConnection, _ sql: String, _ bindings: [SQLiteValue], path: String
    ) throws(StoreError) -> [SQLiteRow] {
        do {
            return try connection.query(sql, bindings)
        } catch {
            throw StoreError(error, path: path)
        }
    }
}

/// The store's time representation: microseconds since 1970-01-01T00:00:00Z.
public enum StoreTime {
    /// `date` in microseconds since 1970, rounded to the nearest; a date beyond Int64's range
    /// of microseconds (about ±292 000 years) is clamped to it instead of trapping.
    public static func microseconds(_ date: Date) -> Int64 {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        if let exact = Int64(exactly: micros) { return exact }
        return micros > 0 ? .max : .min
    }

    /// The date of a stored microsecond count.
    public static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }
}
