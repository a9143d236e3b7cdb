public import Dispatch
import Synchronization

/// Runs a handler on a serial queue whenever a descriptor is readable, until cancelled.
///
/// This is the one place a descriptor is watched with a `DispatchSource` read source: readers of
/// byte streams, datagrams, netlink sockets and listening sockets build on it. The handler runs
/// on `queue`, one call at a time; it should read until `EAGAIN`, because the source reports
/// readiness, not amounts. `onCancel` runs once on `queue` after the last handler: that is the
/// moment the descriptor may be closed (dispatch requires the descriptor to outlive its source).
///
/// Thread-safe: ``cancel()`` may be called from any thread, any number of times. libdispatch
/// objects are safe to use from any thread (dispatch_object(3)); the source lives in a `Mutex`
/// because swift-corelibs-libdispatch does not mark its protocols `Sendable`.
public final class ReadinessSource: Sendable {
    private let source: Mutex<(any DispatchSourceRead)?>

    /// Watches `descriptor` on `queue` and starts at once.
    public init(
        descriptor: Int32, queue: DispatchQueue, onCancel: @escaping @Sendable () -> Void = {},
        onReadable: @escaping @Sendable () -> Void
    ) {
        let read = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        read.setEventHandler(handler: onReadable)
        read.setCancelHandler(handler: onCancel)
        read.resume()
        source = Mutex(read)
    }

    deinit {
        cancel()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { source.withLock { $0 == nil } }

    /// Stops watching. The handler is not called again once the queue has finished the call in
    /// progress, if any; then `onCancel` runs. Idempotent.
    public func cancel() {
        let current = source.withLock { source -> (any DispatchSourceRead)? in
            let current = source
            source = nil
            return current
        }
        current?.cancel()
    }
}
