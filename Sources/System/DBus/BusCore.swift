import AsyncPrimitives
import CSystemd
import Dispatch
import LinuxSystem
import Synchronization

/// The sd-bus connection behind a ``DBusConnection``: the bus handle, the sources that drive it,
/// and everything in flight on it (calls, matches, exported objects, calls to answer).
///
/// Isolation: an actor whose executor is a ``AsyncPrimitives/QueueExecutor``, so every sd-bus
/// call runs on that serial queue, never on the cooperative pool, and the compiler checks every
/// access to the state. The readiness sources and the timer that drive `sd_bus_process` are made
/// on the same queue and enter the actor with `assumeIsolated`; sd-bus runs its callbacks inside
/// `sd_bus_process`, so they run isolated to the actor too. Code outside the actor that cannot
/// wait (a cancellation handler, a stream's termination, an answer from any thread) hands work
/// over with ``enqueue(_:)``, which keeps the order it was handed over in.
///
/// The calls, matches and objects in flight are immutable tokens (``PendingCall``,
/// ``Subscription``, ``ExportedObject``) whose mutable state (slot, continuation) the actor keeps
/// in its tables; sd-bus holds each token unretained as its callback's userdata, and the table
/// keeps it alive until its slot is released, on every path (reply, cancellation, removal, or
/// the bus dropping).
actor BusCore {
    private let executor = QueueExecutor(label: "healthgate.dbus")
    /// The bus queue, which runs the actor and every source's handler.
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Signals dropped by a full stream or because they could not be decoded.
    let dropped = Atomic<Int>(0)
    /// False once the bus is closed or dropped.
    let open = Atomic<Bool>(true)
    /// The sd-bus entry points.
    let sd: SDBus
    /// Reads and writes message arguments through them.
    let coding: DBusMessageCoding

    /// The bus; nil once closed or dropped.
    private(set) var bus: OpaquePointer?
    /// Why the bus is closed; nil while it is open.
    private(set) var closedError: DBusError?
    /// The one watch on the bus's descriptor, for reading and writing; writing is suspended
    /// except while sd_bus_get_events asks for POLLOUT.
    private var watch: ReadinessSource?
    private var timer: (any DispatchSourceTimer)?

    /// Method calls waiting for their reply, by token.
    var pendingCalls: [ObjectIdentifier: PendingCall.State] = [:]
    /// Installed (or installing) matches, by token.
    var subscriptions: [ObjectIdentifier: Subscription.State] = [:]
    /// Exported objects, by token.
    var exports: [ObjectIdentifier: ExportedObject.State] = [:]
    /// The signal being dispatched, decoded, while one `sd_bus_process` hands one message to
    /// every match it fits: decoded once for them all (BlueZ's signals reach the scanner and the
    /// discovery loop both). Cleared when that call returns, before the message can be freed.
    var decodedSignal: (message: OpaquePointer, signal: DBusSignal)?
    /// Method calls peers made on exported objects, until they are answered.
    var incomingCalls: [UInt64: CallMessage] = [:]
    /// The key of the next incoming call.
    var nextIncomingCall: UInt64 = 0

    /// Connects (blocking while sd-bus connects and authenticates). Nothing is driven until
    /// ``startDriving()``.
    init(address: String?, library: SDBusLibrary) throws(DBusError) {
        do throws(NativeLibraryError) {
            sd = try library.entryPoints()
        } catch {
            throw DBusError(name: DBusError.failed, message: error.description)
        }
        coding = DBusMessageCoding(sd: sd)
        var opened: OpaquePointer?
        if let address {
            try Self.check(sd.new(&opened), "sd_bus_new")
            let result: Int32 = address.withCString { [sd] text in
                var result = sd.setAddress(opened, text)
                if result >= 0 { result = sd.setBusClient(opened, 1) }
                if result >= 0 { result = sd.start(opened) }
                return result
            }
            if result < 0 {
                _ = sd.unref(opened)
                throw DBusError(errno: -result, "connecting to the bus at \(address)")
            }
        } else {
            try Self.check(sd.openSystem(&opened), "connecting to the system bus")
        }
        bus = opened
    }

    static func check(_ result: Int32, _ what: String) throws(DBusError) {
        if result < 0 { throw DBusError(errno: -result, what) }
    }

    /// Makes the sources that drive the bus, and processes what is already there. Blocks until
    /// that is done on the bus queue; call it once, from outside the queue.
    nonisolated func startDriving() {
        executor.queue.sync { assumeIsolated { $0.startSources() } }
    }

    /// Runs `body` isolated to the core, after what was handed over before it. For code outside
    /// the actor that must not wait: cancellation handlers, stream terminations, answers.
    nonisolated func enqueue(_ body: @escaping @Sendable (isolated BusCore) -> Void) {
        executor.queue.async { self.assumeIsolated { body($0) } }
    }

    /// Pumps the bus isolated to the core. Only for handlers of sources and timers made on the bus
    /// queue, which is the actor's executor: they run there already. (A generic "run this closure
    /// isolated" helper here crashes Swift 6.0.3's SIL verifier in a release build.)
    private nonisolated func pumpOnQueue() {
        assumeIsolated { core in core.pump() }
    }

    /// The handler of the bus's sources and timer: ``pumpOnQueue()`` on an unowned core. Made in a
    /// nonisolated function: Swift 6.0.3 crashes on the same closure written in an isolated one.
    private nonisolated func pumpHandler() -> @Sendable () -> Void {
        { [unowned self] in pumpOnQueue() }
    }

    /// Closes the connection: fails everything in flight. Safe to call more than once.
    nonisolated func close() {
        enqueue { $0.fail(DBusError(name: DBusError.disconnected, message: "the connection was closed")) }
    }

    /// The error for an operation on a closed bus.
    var closed: DBusError {
        closedError ?? DBusError(name: DBusError.disconnected, message: "closed")
    }

    // MARK: Driving the bus

    private func startSources() {
        guard let bus else { return }
        let fd = sd.getFd(bus)
        guard fd >= 0 else {
            fail(DBusError(errno: -fd, "sd_bus_get_fd"))
            return
        }
        // sd-bus owns the descriptor and closes it with the bus, in fail(_:), on this queue right
        // after cancelling the watch: cancel() has taken the descriptor out of the set by then
        // and no handler can be running (ReadinessSource's rule). The watch is cancelled before
        // the core can go (fail(_:) runs first), hence `unowned`.
        let queue = executor.queue
        let pump = pumpHandler()
        do {
            watch = try ReadinessSource(
                descriptor: fd, events: [.readable, .writable], suspended: [.writable], queue: queue
            ) { _ in pump() }
        } catch {
            fail(DBusError(errno: error.rawValue, "watching the bus's descriptor"))
            return
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler(handler: pumpHandler())
        timer.schedule(deadline: .distantFuture)
        timer.resume()
        self.timer = timer
        pump()
    }

    /// Processes everything sd-bus has, then re-arms the sources (sd_bus_process(3),
    /// sd_bus_get_events(3), sd_bus_get_timeout(3)). sd-bus runs the callbacks of calls, matches
    /// and objects inside sd_bus_process, so here, isolated to the core.
    func pump() {
        while let bus {
            let result = sd.process(bus, nil)
            decodedSignal = nil
            if result < 0 {
                fail(DBusError(errno: -result, "processing the bus"))
                return
            }
            if result == 0 { break }
        }
        guard let bus else { return }
        let events = sd.getEvents(bus)
        if events < 0 {
            fail(DBusError(errno: -events, "sd_bus_get_events"))
            return
        }
        let wantWrite = (events & Int32(POLLOUT)) != 0
        if wantWrite { watch?.resume(.writable) } else { watch?.suspend(.writable) }
        var deadline: UInt64 = 0
        if sd.getTimeout(bus, &deadline) >= 0, deadline != UInt64.max {
            let now = UInt64(hg_monotonic_usec())
            let delta = deadline > now ? deadline - now : 0
            timer?.schedule(deadline: .now() + .microseconds(Int(min(delta, 3_600_000_000))))
        } else {
            timer?.schedule(deadline: .distantFuture)
        }
    }

    /// Fails everything in flight and releases the bus.
    func fail(_ error: DBusError) {
        guard closedError == nil else { return }
        closedError = error
        open.store(false, ordering: .relaxed)
        let calls = pendingCalls
        pendingCalls.removeAll()
        for (_, call) in calls {
            if let slot = call.slot { _ = sd.slotUnref(slot) }
            call.continuation.resume(throwing: error.with(context: call.call.context))
        }
        let matches = subscriptions
        subscriptions.removeAll()
        for (_, match) in matches {
            if let slot = match.slot { _ = sd.slotUnref(slot) }
            match.installed?.resume(throwing: error)
            match.subscription.stream.finish(throwing: error)
        }
        let objects = exports
        exports.removeAll()
        for (_, object) in objects {
            if let slot = object.slot { _ = sd.slotUnref(slot) }
            object.object.stream.finish(throwing: error)
        }
        // Unanswered calls are answered by nobody: the bus is gone.
        incomingCalls.removeAll()
        watch?.cancel()
        timer?.cancel()
        watch = nil
        timer = nil
        if let bus { _ = sd.closeUnref(bus) }
        bus = nil
    }

    /// The calls, matches and objects in flight, for tests that check they are released.
    func inFlight() -> [any AnyObject & Sendable] {
        pendingCalls.values.map { $0.call } + subscriptions.values.map { $0.subscription }
            + exports.values.map { $0.object }
    }

    /// The name the bus gave this connection.
    func uniqueName() throws(DBusError) -> String {
        guard let bus, closedError == nil else { throw closed }
        var name: UnsafePointer<CChar>?
        let result = sd.getUniqueName(bus, &name)
        guard result >= 0, let name else { throw DBusError(errno: -result, "sd_bus_get_unique_name") }
        return String(cString: name)
    }
}
