import SQLite
import Synchronization

/// The store's read-only connections for queries, each confined to its own serial queue
/// (``SQLite/SQLiteDatabase``). A read goes to the connection with the fewest reads under way,
/// so a long query (a year of statistics) and a short one run side by side; reads beyond the
/// pool's size wait on a connection's queue. WAL readers never block the writer, nor it them.
final class ReaderPool: Sendable {
    private let databases: [SQLiteDatabase]
    private let busy: Mutex<[Int]>
    private let path: String

    /// Opens `count` read-only connections to `path`, running `check` on the first before the
    /// others are opened (the schema check). Opening blocks.
    init(path: String, count: Int, check: (SQLiteConnection) throws(StoreError) -> Void) throws(StoreError) {
        var databases: [SQLiteDatabase] = []
        do {
            for index in 0..<max(1, count) {
                let connection = try SQLiteConnection(path: path, mode: .readOnly)
                if index == 0 { try check(connection) }
                databases.append(SQLiteDatabase(connection: connection, label: "store.reader\(index)"))
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.wrap(error, path: path)
        }
        self.databases = databases
        self.busy = Mutex(Array(repeating: 0, count: databases.count))
        self.path = path
    }

    /// Runs `body` in one read transaction on the least busy connection's queue.
    func read<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        let index = take()
        defer { release(index) }
        let path = self.path
        do {
            return try await databases[index].perform { connection in
                try connection.transaction(.deferred) { try body(connection) }
            }
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }

    /// Runs `body` in one read transaction on the least busy connection, while the calling
    /// thread waits (see ``SQLite/SQLiteDatabase/performBlocking(_:)``).
    func readBlocking<T: Sendable>(_ body: @Sendable (SQLiteConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        let index = take()
        defer { release(index) }
        do {
            return try databases[index].performBlocking { connection in
                try connection.transaction(.deferred) { try body(connection) }
            }
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }

    /// Closes every connection, each after the read running on it.
    func close() async {
        for database in databases { await database.close() }
    }

    private func take() -> Int {
        busy.withLock { busy in
            var best = 0
            for index in busy.indices where busy[index] < busy[best] { best = index }
            busy[best] += 1
            return best
        }
    }

    private func release(_ index: Int) {
        busy.withLock { $0[index] -= 1 }
    }
}
