import LinuxSystem
import Synchronization

/// The connections of udev-discovered devices, by syspath, so that a removal closes the right
/// one. Thread-safe.
final class ActiveDevices: Sendable {
    private let entries = Mutex<[String: (any ByteStreamConnection)?]>([:])

    /// Claims `syspath`; false if a reader already runs for it.
    func claim(_ syspath: String) -> Bool {
        entries.withLock { entries in
            guard entries[syspath] == nil else { return false }
            entries[syspath] = .some(nil)
            return true
        }
    }

    func attach(_ connection: any ByteStreamConnection, to syspath: String) {
        entries.withLock { $0[syspath] = .some(connection) }
    }

    func release(_ syspath: String) {
        _ = entries.withLock { $0.removeValue(forKey: syspath) }
    }

    /// Closes the connection of `syspath`; its reader ends and the reader task returns.
    func close(_ syspath: String) {
        let connection = entries.withLock { $0[syspath] ?? nil }
        connection?.close()
    }

    var count: Int { entries.withLock { $0.count } }
}
