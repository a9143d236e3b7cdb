import Synchronization

/// Counts a descriptor's dispatch sources and closes the descriptor once the last is cancelled
/// (or at once when none was made).
final class SourceCloser: Sendable {
    private let descriptor: FileDescriptor
    private let live = Mutex(0)

    init(_ descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    /// A source was made on the descriptor.
    func sourceAdded() {
        live.withLock { $0 += 1 }
    }

    /// From a source's cancel handler.
    func sourceCancelled() {
        if live.withLock({ count in
            count -= 1
            return count == 0
        }) {
            descriptor.close()
        }
    }

    /// Closes the descriptor now if no source was made on it.
    func closeIfNoSources() {
        if live.withLock({ $0 == 0 }) { descriptor.close() }
    }
}
