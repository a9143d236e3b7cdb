import AsyncPrimitives
import FoundationEssentials
import HealthModel
import SQLite
import Synchronization
import Dispatch

/// The store's one writer: a ``RecordWriter`` confined to its own serial queue, as an actor
/// whose executor is that queue, so `sqlite3_step` never runs on the cooperative pool and the
/// compiler checks that nothing else touches the connection (GRDB's `DatabasePool` writer).
///
/// Async callers suspend on it; a caller that lives on a serial queue of its own and must block
/// (the workout journal's synchronous protocol) uses ``performBlocking(_:)``.
actor StoreWriter {
    private let executor = QueueExecutor(label: "healthgate.store.writer")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// nil once closed.
    private var writer: RecordWriter?
    private let path: String
    /// Reachable from any thread, for a forced stop; inert once the connection is closed.
    private let interruptHandle: SQLiteInterruptHandle
    /// The calls begun and ended on the writer, readable from any thread.
    nonisolated let activity = Mutex(WriterActivity())

    /// Takes ownership of `writer`, which nothing else may use from now on.
    init(writer: sending RecordWriter) {
        self.path = writer.path
        self.interruptHandle = writer.interruptHandle
        self.writer = writer
    }

    /// Interrupts the statement in progress, from any thread.
    nonisolated func interrupt() {
        interruptHandle.interrupt()
    }

    /// Runs `body` with the writer on its queue.
    func perform<T: Sendable>(_ body: @Sendable (RecordWriter) throws(StoreError) -> T) throws(StoreError) -> T {
        try run(body)
    }

    /// Runs `body` with the writer on its queue while the calling thread waits. Never from the
    /// cooperative pool, nor from the writer's own queue.
    nonisolated func performBlocking<T: Sendable>(_ body: @Sendable (RecordWriter) throws(StoreError) -> T) throws(StoreError) -> T {
        let outcome: Result<T, StoreError> = executor.queue.sync {
            self.assumeIsolated { writer in
                Result { () throws(StoreError) in try writer.run(body) }
            }
        }
        return try outcome.get()
    }

    private func run<T>(_ body: (RecordWriter) throws(StoreError) -> T) throws(StoreError) -> T {
        guard let writer else {
            throw StoreError(.closed, path: path, message: "the store's writer is closed")
        }
        let began = writer.uptime()
        activity.withLock {
            $0.begun += 1
            $0.busySince = began
        }
        defer {
            activity.withLock {
                $0.ended += 1
                $0.busySince = nil
            }
        }
        return try body(writer)
    }

    /// Closes the open quantity series this writer grew (``RecordWriter/closeAllSeries()``: never
    /// another process's), then the connection (SQLite checkpoints the WAL when the last
    /// connection closes).
    ///
    /// - Throws: ``StoreError`` when the series cannot be closed; the connection closes anyway,
    ///   and the series stay open in the file: the next writer to open it adds to them or
    ///   closes them, so nothing is lost.
    func close() throws(StoreError) {
        defer { writer = nil }
        guard let writer else { return }
        try writer.transaction { try writer.closeAllSeries() }
    }
}
