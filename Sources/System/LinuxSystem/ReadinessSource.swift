public import Dispatch
import CLinuxSystem

/// Runs a handler on a serial queue whenever a descriptor is readable (or writable), until
/// cancelled: one watch in a ``ReadinessSet``.
///
/// This is the one place a descriptor is watched: readers of byte streams, datagrams, netlink
/// sockets and listening sockets, a non-blocking connect waiting for writability, the D-Bus
/// connection and the line server's connections build on it. None of them makes a
/// `DispatchSource` on a descriptor it reads or writes; ``ReadinessSet`` says why.
///
/// The handler runs on the set's queue, one call at a time; a reader should read until `EAGAIN`,
/// because a watch reports readiness, not amounts. A hang-up or an error is reported to every
/// direction not suspended, which then meets end of file or the error itself.
///
/// One watch per descriptor, for its whole life: a descriptor that is read and written has one
/// watch for both directions (``init(descriptor:in:events:suspended:onCancel:onReady:)``), and
/// the direction not wanted for now is suspended, never cancelled and made again.
///
/// The rule for the descriptor: it stays open until ``cancel()`` has returned, which removes it
/// from the set; `onCancel` runs once on the queue after the last handler call, and is where the
/// owner closes it. (Closing it right after `cancel()` returns is safe only on the queue itself,
/// where no handler can be running.)
///
/// ``suspend(_:)`` pauses a direction (a reader that must not read while it answers, a listener
/// out of descriptors, a writer with nothing to write) and ``resume(_:)`` restarts it; readiness
/// that arrived meanwhile is reported on resume.
///
/// Thread-safe: every method may be called from any thread, ``cancel()`` any number of times.
public final class ReadinessSource: Sendable {
    /// What to wait for.
    public enum Event: Sendable, Hashable {
        /// Data to read, a connection to accept, or end of file.
        case readable
        /// Room to write; for a socket connecting without blocking, the end of the connect.
        case writable

        var mask: UInt32 {
            switch self {
            case .readable: hg_epoll_in
            case .writable: hg_epoll_out
            }
        }
    }

    private let owner: ReadinessSet
    private let key: UInt64
    /// Whether the set was made for this watch alone, and closes with it.
    private let ownsSet: Bool
    private let interest: UInt32

    /// Watches `descriptor` for `event` on `queue`, in a set of its own, and starts at once.
    /// - Throws: ``Errno`` when the set cannot be made (`EMFILE`) or the descriptor cannot be
    ///   watched (`EPERM` for a regular file, `EBADF`).
    public convenience init(
        descriptor: Int32, event: Event = .readable, queue: DispatchQueue,
        onCancel: @escaping @Sendable () -> Void = {}, onReady: @escaping @Sendable () -> Void
    ) throws(Errno) {
        let set = try ReadinessSet(queue: queue)
        do {
            try self.init(descriptor: descriptor, in: set, events: [event], ownsSet: true, onCancel: onCancel) { _ in
                onReady()
            }
        } catch {
            set.close()
            throw error
        }
    }

    /// Watches `descriptor` for `events` on `queue`, in a set of its own, those in `suspended`
    /// paused from the start. `onReady` gets the direction that is ready.
    /// - Throws: ``Errno`` as ``init(descriptor:event:queue:onCancel:onReady:)``.
    public convenience init(
        descriptor: Int32, events: Set<Event>, suspended: Set<Event> = [], queue: DispatchQueue,
        onCancel: @escaping @Sendable () -> Void = {}, onReady: @escaping @Sendable (Event) -> Void
    ) throws(Errno) {
        let set = try ReadinessSet(queue: queue)
        do {
            try self.init(
                descriptor: descriptor, in: set, events: events, suspended: suspended, ownsSet: true,
                onCancel: onCancel, onReady: onReady)
        } catch {
            set.close()
            throw error
        }
    }

    /// Watches `descriptor` in `set` for `events`, those in `suspended` paused from the start.
    /// `onReady` gets the direction that is ready, on the set's queue.
    /// - Throws: ``Errno`` when the descriptor cannot be watched (`EPERM` for a regular file,
    ///   `EBADF`, `EEXIST` when it is already in the set) or the set is closed (`EBADF`).
    public convenience init(
        descriptor: Int32, in set: ReadinessSet, events: Set<Event>, suspended: Set<Event> = [],
        onCancel: @escaping @Sendable () -> Void = {}, onReady: @escaping @Sendable (Event) -> Void
    ) throws(Errno) {
        try self.init(
            descriptor: descriptor, in: set, events: events, suspended: suspended, ownsSet: false, onCancel: onCancel,
            onReady: onReady)
    }

    private init(
        descriptor: Int32, in set: ReadinessSet, events: Set<Event>, suspended: Set<Event> = [], ownsSet: Bool,
        onCancel: @escaping @Sendable () -> Void, onReady: @escaping @Sendable (Event) -> Void
    ) throws(Errno) {
        let interest = events.reduce(0) { $0 | $1.mask }
        self.owner = set
        self.ownsSet = ownsSet
        self.interest = interest
        self.key = try set.add(
            descriptor: descriptor, interest: interest, suspended: suspended.reduce(0) { $0 | $1.mask } & interest,
            onCancel: onCancel, onReady: onReady)
    }

    deinit {
        cancel()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { !owner.contains(key) }

    /// Whether every direction watched is paused by ``suspend(_:)`` (false once cancelled).
    public var isSuspended: Bool { owner.suspended(key).map { $0 == interest } ?? false }

    /// Whether `event` is paused by ``suspend(_:)`` (false once cancelled).
    public func isSuspended(_ event: Event) -> Bool {
        owner.suspended(key).map { $0 & event.mask != 0 } ?? false
    }

    /// Pauses the handler for `event`, or for every direction when nil, until ``resume(_:)``;
    /// does nothing for a direction already paused, or once cancelled.
    public func suspend(_ event: Event? = nil) {
        owner.setSuspended(key, event?.mask ?? interest, true)
    }

    /// Restarts the handler for `event`, or for every direction when nil; does nothing for a
    /// direction not paused, or once cancelled.
    public func resume(_ event: Event? = nil) {
        owner.setSuspended(key, event?.mask ?? interest, false)
    }

    /// Stops watching: the descriptor is out of the set when this returns. The handler is not
    /// called again once the queue has finished the call in progress, if any; then `onCancel`
    /// runs. Idempotent.
    public func cancel() {
        owner.remove(key)
        if ownsSet { owner.close() }
    }
}
