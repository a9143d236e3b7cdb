public import Synchronization

/// A read-only ``SQLiteConnection`` behind a lock, used in the caller's own context: for short
/// reads, which would otherwise spend more time hopping to a ``SQLiteDatabase``'s queue and
/// back than running their SQL.
///
/// It never waits, so an async caller can use it on the cooperative thread pool:
/// - for the lock: ``readIfAvailable(_:)`` returns nil at once when another caller holds the
///   connection, and the caller takes its queue path instead;
/// - for other connections' locks: its busy timeout is zero, so SQLITE_BUSY (a WAL reader meets
///   it only while another connection recovers or resets the log) fails at once, and the caller
///   retries on its queue, whose connection waits.
///
/// What remains is the read itself: a caller uses it only for reads whose work is bounded (one
/// step down an index, a primary-key lookup), never for a scan whose length depends on the data.
public final class SQLiteInlineReader: Sendable {
    /// Nil once ``close()`` has run.
    @usableFromInline let connection: Mutex<SQLiteConnection?>
    /// The database file.
    public let path: String

    /// Opens `path` read-only. Opening blocks: call it where blocking is allowed (an
    /// initializer that opens the file anyway, a queue).
    public init(path: String) throws(SQLiteError) {
        connection = Mutex(try SQLiteConnection(path: path, mode: .readOnly, busyTimeout: .zero))
        self.path = path
    }

    /// Runs `body` on the connection now, on the calling thread, unless another caller holds it:
    /// then returns nil without running `body`, as it does once the reader is closed. `body` runs outside any transaction of its own;
    /// a read of more than one statement opens one with ``SQLiteConnection/transaction(_:_:)``.
    // Inlinable, so that it is specialized for each result type in the caller's module.
    @inlinable
    public func readIfAvailable<T: Sendable, Failure: Error>(
        _ body: (SQLiteConnection) throws(Failure) -> T
    ) throws(Failure) -> T? {
        let result = try connection.withLockIfAvailable { (connection) throws(Failure) -> T? in
            guard let connection else { return nil }
            return try body(connection)
        }
        return result ?? nil
    }

    /// Closes the connection, once a caller running on it has finished: later reads return nil.
    public func close() {
        connection.withLock { $0 = nil }
    }
}
