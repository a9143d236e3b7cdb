public import Dispatch
import Synchronization

/// Runs a handler on a serial queue whenever a descriptor is readable (or writable), until
/// cancelled.
///
/// This is the one place a descriptor is watched with a `DispatchSource`: readers of byte
/// streams, datagrams, netlink sockets and listening sockets, and a non-blocking connect waiting
/// for writability, build on it. The handler runs on `queue`, one call at a time; a reader should
/// read until `EAGAIN`, because the source reports readiness, not amounts. `onCancel` runs once on `queue` after the last handler: that is the
/// moment the descriptor may be closed (dispatch requires the descriptor to outlive its source).
///
/// ``suspend()`` pauses the handler (a reader that must not read while it answers, a listener out
/// of descriptors) and ``resume()`` restarts it; cancelling a suspended source resumes it first, as
/// dispatch requires for `onCancel` to run.
///
/// Thread-safe: ``cancel()`` may be called from any thread, any number of times. libdispatch
/// objects are safe to use from any thread (dispatch_object(3)); the source lives in a `Mutex`
/// because swift-corelibs-libdispatch does not mark its protocols `Sendable`.
public final class ReadinessSource: Sendable {
    /// What to wait for.
    public enum Event: Sendable {
        /// Data to read, a connection to accept, or end of file.
        case readable
        /// Room to write; for a socket connecting without blocking, the end of the connect.
        case writable
    }

    private struct State {
        var source: (any DispatchSourceProtocol)?
        var suspended = false
    }

    private let state: Mutex<State>

    /// Watches `descriptor` on `queue` for `event` and starts at once.
    public init(
        descriptor: Int32, event: Event = .readable, queue: DispatchQueue,
        onCancel: @escaping @Sendable () -> Void = {}, onReady: @escaping @Sendable () -> Void
    ) {
        let made: any DispatchSourceProtocol = switch event {
        case .readable: DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        case .writable: DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: queue)
        }
        made.setEventHandler(handler: onReady)
        made.setCancelHandler(handler: onCancel)
        made.resume()
        state = Mutex(State(source: made))
    }

    deinit {
        cancel()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.source == nil } }

    /// Whether the handler is paused by ``suspend()``.
    public var isSuspended: Bool { state.withLock { $0.suspended } }

    /// Pauses the handler until ``resume()``; does nothing when already paused or cancelled.
    public func suspend() {
        state.withLock { state in
            guard let source = state.source, !state.suspended else { return }
            source.suspend()
            state.suspended = true
        }
    }

    /// Restarts a paused handler; does nothing when not paused or cancelled.
    public func resume() {
        state.withLock { state in
            guard let source = state.source, state.suspended else { return }
            source.resume()
            state.suspended = false
        }
    }

    /// Stops watching. The handler is not called again once the queue has finished the call in
    /// progress, if any; then `onCancel` runs. Idempotent.
    public func cancel() {
        let current = state.withLock { state -> (any DispatchSourceProtocol)? in
            let current = state.source
            if state.suspended { current?.resume() }
            state = State(source: nil)
            return current
        }
        current?.cancel()
    }
}
