public import Dispatch
import CLinuxSystem
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// An epoll(7) set of descriptors, each watched for readability and writability, driven by one
/// `DispatchSource` on the set's epoll descriptor, on one serial queue. Its watches are
/// ``ReadinessSource``s.
///
/// Why not one `DispatchSource` per descriptor: swift-corelibs-libdispatch's epoll backend
/// (src/event/event_epoll.c) keeps one "muxnote" per descriptor, shared by every read and write
/// source on it, and when the kernel reports `EPOLLHUP` it removes the descriptor from its epoll
/// set (`_dispatch_event_merge_fd`) and marks each source for deletion
/// (`_dispatch_event_merge_hangup`, `DU_STATE_NEEDS_DELETE`), which `_dispatch_source_wakeup`
/// sends to the source's *target queue*; there `_dispatch_source_invoke2` unregisters it
/// (`_dispatch_unote_unregister_muxed`: list removal, `epoll_ctl`, `free` of the muxnote) on a
/// worker thread, while the manager thread, without a lock, installs, re-arms and unregisters the
/// other sources on that descriptor (or on another descriptor in the same hash bucket) and walks
/// those same lists. A peer that hangs up while a write source is made or cancelled beside the
/// read source can so corrupt them: "Source finalized twice"
/// (`_dispatch_source_refs_finalize_unregistration`), a crash in `_dispatch_unote_unregister_muxed`,
/// or a source registered into a muxnote epoll no longer reports, which never fires.
///
/// Here libdispatch watches only the set's epoll descriptor: one source, made with the set and
/// cancelled once when it closes, on a descriptor that reports nothing but `EPOLLIN` (an epoll
/// descriptor never hangs up), so every change to libdispatch's state happens on its manager
/// thread. The watched descriptors are registered with `EPOLLONESHOT` and re-armed after their
/// handler ran (as libdispatch's own `EV_DISPATCH` sources are); a hang-up or an error is handed
/// to whichever direction is not suspended, which then reads end of file or an error itself.
///
/// The rule this enforces for the descriptors: ``ReadinessSource/cancel()`` removes its
/// descriptor from the set (`EPOLL_CTL_DEL`) before it returns, so after that nothing watches it,
/// and `onCancel`, which runs afterwards on the queue after the watch's last handler, is where the
/// owner closes it. Ready entries are found by a key that is never reused, never by descriptor
/// number, so a number closed and reused in between is never mistaken for the old one.
///
/// Thread-safe: watches may be made, suspended, resumed and cancelled from any thread. Handlers
/// run on `queue`, one at a time.
public final class ReadinessSet: Sendable {
    struct Watch {
        let descriptor: Int32
        /// EPOLLIN and/or EPOLLOUT.
        let interest: UInt32
        var suspended: UInt32
        /// Registered with a mask and not yet reported since (EPOLLONESHOT).
        var armed: Bool
        let onReady: @Sendable (ReadinessSource.Event) -> Void
        let onCancel: @Sendable () -> Void

        var enabled: UInt32 { interest & ~suspended }
    }

    private struct State {
        var source: (any DispatchSourceRead)?
        var watches: [UInt64: Watch] = [:]
        var nextKey: UInt64 = 1
        /// The first descriptor that could not be re-armed (closed before its watch was
        /// cancelled, which the rule above forbids).
        var rearmFailure: Errno?
    }

    /// The queue the handlers and `onCancel`s run on.
    public let queue: DispatchQueue
    private let epoll: Int32
    private let state: Mutex<State>

    /// An empty set whose handlers run on `queue`.
    /// - Throws: ``Errno`` from epoll_create1(2) (`EMFILE`, `ENFILE`, `ENOMEM`).
    public init(queue: DispatchQueue) throws(Errno) {
        let epoll = try Errno.retryingInterrupts { hg_epoll_create() }
        self.queue = queue
        self.epoll = epoll
        let source = DispatchSource.makeReadSource(fileDescriptor: epoll, queue: queue)
        // The only close of the epoll descriptor, after libdispatch unregistered it
        // (dispatch_source_set_cancel_handler(3)).
        source.setCancelHandler { _ = Glibc.close(epoll) }
        self.state = Mutex(State(source: source))
        state.withLock { state in
            state.source?.setEventHandler { [weak self] in self?.deliverReady() }
            state.source?.resume()
        }
    }

    deinit {
        close()
    }

    /// Cancels every watch still in the set (their `onCancel`s run on the queue) and stops. Watches
    /// made afterwards fail with `EBADF`. Idempotent.
    public func close() {
        // The source is cancelled under the lock (dispatch_source_cancel only marks it; its
        // handler runs later, on the queue, and finds it gone): Swift 6.0's region checking
        // rejects handing a non-Sendable source out of the lock's closure.
        let watches = state.withLock { state -> [Watch] in
            state.source?.cancel()
            state.source = nil
            let taken = Array(state.watches.values)
            state.watches = [:]
            for watch in taken { _ = hg_epoll_ctl(epoll, hg_epoll_delete, watch.descriptor, 0, 0) }
            return taken
        }
        for watch in watches { queue.async(execute: watch.onCancel) }
    }

    /// The first error re-arming a descriptor (`EBADF`, `ENOENT`: it was closed before its watch
    /// was cancelled); its watch stops reporting. Nil while the rule is kept.
    public var rearmFailure: Errno? { state.withLock { $0.rearmFailure } }

    /// The number of watches in the set.
    public var count: Int { state.withLock { $0.watches.count } }

    // MARK: For ReadinessSource

    func add(
        descriptor: Int32, interest: UInt32, suspended: UInt32, onCancel: @escaping @Sendable () -> Void,
        onReady: @escaping @Sendable (ReadinessSource.Event) -> Void
    ) throws(Errno) -> UInt64 {
        try state.withLock { state throws(Errno) -> UInt64 in
            guard state.source != nil else { throw .badFileDescriptor }
            let key = state.nextKey
            let watch = Watch(
                descriptor: descriptor, interest: interest, suspended: suspended, armed: true, onReady: onReady,
                onCancel: onCancel)
            try Errno.retryingInterrupts {
                hg_epoll_ctl(epoll, hg_epoll_add, descriptor, watch.enabled | hg_epoll_one_shot, key)
            }
            state.nextKey += 1
            state.watches[key] = watch
            return key
        }
    }

    /// Removes the watch, synchronously, and queues its `onCancel`; false when it was gone.
    @discardableResult
    func remove(_ key: UInt64) -> Bool {
        let removed = state.withLock { state -> Watch? in
            guard let watch = state.watches.removeValue(forKey: key) else { return nil }
            // Fails only for a descriptor closed before its watch (EBADF), which the kernel has
            // already dropped from the set when that was its last reference (epoll(7), Q6).
            _ = hg_epoll_ctl(epoll, hg_epoll_delete, watch.descriptor, 0, 0)
            return watch
        }
        guard let removed else { return false }
        // After any handler call in progress on the queue, as the documentation promises.
        queue.async(execute: removed.onCancel)
        return true
    }

    func contains(_ key: UInt64) -> Bool {
        state.withLock { $0.watches[key] != nil }
    }

    func suspended(_ key: UInt64) -> UInt32? {
        state.withLock { $0.watches[key]?.suspended }
    }

    /// Suspends (`suspend` true) or resumes the directions in `mask`, re-registering the mask.
    func setSuspended(_ key: UInt64, _ mask: UInt32, _ suspend: Bool) {
        state.withLock { state in
            guard var watch = state.watches[key] else { return }
            let before = watch.suspended
            watch.suspended = suspend ? before | mask : before & ~mask
            guard watch.suspended != before else { return }
            // Suspending narrows a registration that is armed; resuming arms one that has
            // something left to report. An armed registration with nothing enabled still reports
            // a hang-up once, which deliverReady() then holds until a resume.
            if suspend ? watch.armed : watch.enabled != 0 {
                watch.armed = arm(&state, watch, key: key, mode: hg_epoll_modify)
            }
            state.watches[key] = watch
        }
    }

    // MARK: Delivering

    /// The handler of the epoll descriptor's source, on the queue: hands each ready entry to its
    /// watch, then re-arms it.
    private func deliverReady() {
        var masks = [UInt32](repeating: 0, count: 64)
        var keys = [UInt64](repeating: 0, count: 64)
        let count = masks.withUnsafeMutableBufferPointer { masks in
            keys.withUnsafeMutableBufferPointer { keys in
                hg_epoll_take(epoll, masks.baseAddress, keys.baseAddress, Int32(masks.count))
            }
        }
        // EINTR cannot happen with a zero timeout; any other failure leaves the set readable, so
        // libdispatch calls again.
        guard count > 0 else { return }
        for index in 0..<Int(count) {
            deliver(keys[index], mask: masks[index])
        }
    }

    private func deliver(_ key: UInt64, mask: UInt32) {
        let handler = state.withLock { state -> (@Sendable (ReadinessSource.Event) -> Void)? in
            guard var watch = state.watches[key] else { return nil }
            watch.armed = false
            state.watches[key] = watch
            return watch.onReady
        }
        guard let handler else { return }
        let trouble = mask & (hg_epoll_error | hg_epoll_hang_up) != 0
        for (event, bit) in [(ReadinessSource.Event.readable, hg_epoll_in), (.writable, hg_epoll_out)] {
            guard mask & bit != 0 || trouble else { continue }
            // Read the state again before each direction: the previous handler may have
            // suspended or cancelled the watch.
            let enabled = state.withLock { $0.watches[key].map { $0.enabled & bit != 0 } ?? false }
            if enabled { handler(event) }
        }
        state.withLock { state in
            guard var watch = state.watches[key], !watch.armed, watch.enabled != 0 else { return }
            watch.armed = arm(&state, watch, key: key, mode: hg_epoll_modify)
            state.watches[key] = watch
        }
    }

    /// Registers the watch's enabled directions, once; returns whether that worked.
    private func arm(_ state: inout State, _ watch: Watch, key: UInt64, mode: Int32) -> Bool {
        do {
            try Errno.retryingInterrupts {
                hg_epoll_ctl(epoll, mode, watch.descriptor, watch.enabled | hg_epoll_one_shot, key)
            }
            return true
        } catch {
            if state.rearmFailure == nil { state.rearmFailure = error }
            return false
        }
    }
}
