internal import CSQLite
import Synchronization

/// Interrupts whatever a ``SQLiteConnection`` is running, from any thread: for a forced stop,
/// when the connection's own queue is stuck in `sqlite3_step` (a lock held by another process,
/// a slow disk).
///
/// sqlite3_interrupt(3) may be called from any thread, but not on a connection that is closing
/// or closed; the handle is invalidated, under its lock, before the connection closes, so
/// ``interrupt()`` after that does nothing. Thread-safe.
public final class SQLiteInterruptHandle: Sendable {
    /// The connection's handle as an address (an OpaquePointer is not Sendable); 0 once closed.
    private let handle: Mutex<UInt>

    init(_ connection: OpaquePointer) {
        handle = Mutex(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))))
    }

    /// Makes the connection's running statement fail with SQLITE_INTERRUPT at its earliest
    /// opportunity (see sqlite3_interrupt(3)); statements started later are not affected.
    /// Does nothing once the connection is closed.
    public func interrupt() {
        handle.withLock { address in
            // The lock is held across the call, so the connection cannot close meanwhile.
            guard let pointer = OpaquePointer(bitPattern: address) else { return }
            sqlite3_interrupt(pointer)
        }
    }

    /// Called by the connection right before it closes.
    func invalidate() {
        handle.withLock { $0 = 0 }
    }
}
