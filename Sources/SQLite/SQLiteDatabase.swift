public import Dispatch
public import Foundation

/// A ``SQLiteConnection`` owned by a serial DispatchQueue, usable from async code.
///
/// Every call runs on the queue, so `sqlite3_step` never blocks the cooperative thread pool;
/// callers suspend on a continuation until their block has run (GRDB's SerializedDatabase).
/// The queue is the only thread that touches the connection, which is what makes the type
/// Sendable although the connection is not.
public final class SQLiteDatabase: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let queue: DispatchQueue
    /// The database file.
    public let path: String

    /// Opens the database at `path`, creating parent directories in `.readWrite` mode.
    public init(path: String, mode: SQLiteConnection.Mode = .readWrite, label: String = "sqlite") throws(SQLiteError) {
        if mode == .readWrite {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw SQLiteError(code: 14, message: "cannot create directory: \(error.localizedDescription)",
                                  context: directory.path)
            }
        }
        self.connection = try SQLiteConnection(path: path, mode: mode)
        self.path = path
        self.queue = DispatchQueue(label: "healthgate.\(label)")
    }

    /// Makes the statement running on the queue, if any, fail with SQLITE_INTERRUPT: for a forced
    /// stop. Callable from any thread; the connection lives as long as this object.
    public func interrupt() {
        connection.interruptHandle.interrupt()
    }

    /// Runs `body` on the database's queue and returns its result.
    public func perform<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try body(self.connection) })
            }
        }
    }

    /// Runs `body` on the queue synchronously. For command-line tools and tests only: never call
    /// it from async code.
    public func performBlocking<T>(_ body: (SQLiteConnection) throws -> T) rethrows -> T {
        try queue.sync { try body(connection) }
    }
}
