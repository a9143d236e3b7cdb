import AsyncPrimitives
import Dispatch
import CSystemd
import LinuxSystem
import Synchronization

/// A signal received from the bus.
public struct DBusSignal: Sendable {
    /// The unique name of the sender (`:1.42`).
    public var sender: String?
    /// The object that sent it.
    public var path: String
    /// The signal's interface.
    public var interface: String
    /// The signal's name.
    public var member: String
    /// The body, decoded.
    public var arguments: [DBusValue]

    public init(sender: String?, path: String, interface: String, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// A signal match rule (D-Bus Specification, "Match Rules"). Unset fields match anything.
public struct DBusMatchRule: Sendable, Hashable, CustomStringConvertible {
    /// A well-known or unique sender name; the bus resolves well-known names to their owner.
    public var sender: String?
    /// The signal's interface.
    public var interface: String?
    /// The signal's name.
    public var member: String?
    /// Exactly this object.
    public var path: String?
    /// Matches `path` and every object below it.
    public var pathNamespace: String?

    public init(
        sender: String? = nil, interface: String? = nil, member: String? = nil, path: String? = nil,
        pathNamespace: String? = nil
    ) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
    }

    /// The rule in the bus's textual syntax.
    public var description: String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender='\(sender)'") }
        if let interface { parts.append("interface='\(interface)'") }
        if let member { parts.append("member='\(member)'") }
        if let path { parts.append("path='\(path)'") }
        if let pathNamespace { parts.append("path_namespace='\(pathNamespace)'") }
        return parts.joined(separator: ",")
    }
}

/// A client connection to a D-Bus message bus, over sd-bus.
///
/// The connection belongs to one serial `DispatchQueue`; a `DispatchSource` on the bus's
/// non-blocking fd (plus a write source and a timer from `sd_bus_get_events`/`sd_bus_get_timeout`)
/// runs `sd_bus_process` until it returns 0. Async callers suspend on continuations, so no
/// sd-bus call ever runs on the cooperative thread pool.
///
/// Closing (``close()`` or releasing the last reference) fails pending calls with
/// `org.freedesktop.DBus.Error.Disconnected` and finishes every signal stream with that error.
/// If the bus drops, the same happens with the error sd-bus reports.
public final class DBusConnection: Sendable {
    let core: BusCore

    /// Opens the system bus (`DBUS_SYSTEM_BUS_ADDRESS` of this process, else
    /// `/run/dbus/system_bus_socket`), or the bus at `address` when given
    /// (`unix:path=/tmp/…/bus`).
    ///
    /// This blocks while sd-bus connects and authenticates: async code uses
    /// ``open(address:)`` instead.
    /// Throws ``DBusError`` when the bus cannot be reached (`isUnavailable` is then true), or
    /// when libsystemd cannot be loaded (the message names it and what to install).
    /// - Parameter library: libsystemd, loaded here the first time.
    public init(address: String? = nil, library: SDBusLibrary = SDBusLibrary()) throws(DBusError) {
        core = try BusCore(address: address, library: library)
    }

    /// Opens a connection like ``init(address:)``, with the blocking connect and handshake on a
    /// queue of its own, so the calling task suspends instead of holding a cooperative thread.
    public static func open(address: String? = nil, library: SDBusLibrary = SDBusLibrary()) async throws(DBusError) -> DBusConnection {
        try await QueueExecutor(label: "healthgate.dbus.open").run { () throws(DBusError) -> DBusConnection in
            try DBusConnection(address: address, library: library)
        }
    }

    deinit {
        core.close()
    }

    /// Calls `interface.member` on `path` of `destination` and returns the reply's values.
    ///
    /// Throws ``DBusError`` with the peer's error name for an error reply, and
    /// `CancellationError` when the calling task is cancelled (the reply is then ignored).
    /// `timeout` nil means sd-bus's default (25 s).
    public func call(
        destination: String, path: String, interface: String, member: String,
        arguments: [DBusValue] = [], timeout: Duration? = nil
    ) async throws -> [DBusValue] {
        let pending = PendingCall(context: "\(interface).\(member) on \(path)")
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[DBusValue], any Error>) in
                pending.continuation = continuation
                core.queue.async { [core] in
                    core.start(
                        pending, destination: destination, path: path, interface: interface, member: member,
                        arguments: arguments, timeout: timeout)
                }
            }
        } onCancel: {
            core.queue.async { [core] in core.cancel(pending) }
        }
    }

    /// Subscribes to the signals `rule` matches. Returns once the bus has installed the match,
    /// so no signal sent after this returns is missed.
    ///
    /// The stream buffers up to `bufferLimit` signals and then drops the oldest, counting them in
    /// ``droppedSignals``. It ends with an error when the connection closes or drops; it stays
    /// subscribed until the consumer stops iterating (the match is removed on termination).
    public func signals(
        matching rule: DBusMatchRule, bufferLimit: Int = 4096
    ) async throws -> AsyncThrowingStream<DBusSignal, any Error> {
        let (stream, continuation) = AsyncThrowingStream<DBusSignal, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(bufferLimit))
        let subscription = Subscription(rule: rule.description, stream: continuation)
        continuation.onTermination = { [core] _ in
            core.queue.async { core.remove(subscription) }
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (installed: CheckedContinuation<Void, any Error>) in
                subscription.installed = installed
                core.queue.async { [core] in core.install(subscription) }
            }
        } onCancel: {
            core.queue.async { [core] in core.remove(subscription) }
        }
        return stream
    }

    /// Exports an object at `path`: every method call a peer makes on it arrives on the returned
    /// stream, to be answered with ``DBusIncomingCall/reply(_:)`` or
    /// ``DBusIncomingCall/fail(name:message:)``. Returns once the object is in place.
    ///
    /// The object stays exported until the consumer stops iterating. Up to `bufferLimit` calls
    /// wait unread; a call beyond them is answered `NoReply` at once. The stream ends with an
    /// error when the connection closes or drops. Throws ``DBusError`` when `path` is invalid or
    /// already exported by this connection.
    public func export(path: String, bufferLimit: Int = 64) async throws -> AsyncThrowingStream<DBusIncomingCall, any Error> {
        let (stream, continuation) = AsyncThrowingStream<DBusIncomingCall, any Error>.makeStream(
            bufferingPolicy: .bufferingOldest(bufferLimit))
        let object = ExportedObject(path: path, stream: continuation)
        continuation.onTermination = { [core] _ in
            core.queue.async { core.remove(object) }
        }
        try await withCheckedThrowingContinuation { (added: CheckedContinuation<Void, any Error>) in
            core.queue.async { [core] in added.resume(with: core.add(object)) }
        }
        return stream
    }

    /// The name the bus gave this connection (`:1.42`): where peers send calls to the objects it
    /// exports.
    public func uniqueName() async throws -> String {
        try await withCheckedThrowingContinuation { (named: CheckedContinuation<String, any Error>) in
            core.queue.async { [core] in named.resume(with: core.uniqueName()) }
        }
    }

    /// Whether the connection is still usable: false once closed or dropped by the bus.
    public var isOpen: Bool { core.open.load(ordering: .relaxed) }

    /// Signals dropped because a consumer fell behind, or because they could not be decoded.
    public var droppedSignals: Int { core.dropped.load(ordering: .relaxed) }

    /// Closes the connection. Safe to call more than once.
    public func close() {
        core.close()
    }
}

/// One method call in flight. Touched only on the bus queue once started.
///
/// sd-bus holds an unretained pointer to it as the reply callback's userdata; `BusCore`'s
/// `pendingCalls` keeps it alive until the slot is released. It holds no closure and only a weak
/// reference to the core, so releasing it from `pendingCalls` frees it on every path (reply,
/// cancellation, or the bus dropping).
final class PendingCall: @unchecked Sendable {
    let context: String
    var continuation: CheckedContinuation<[DBusValue], any Error>?
    var slot: OpaquePointer?
    var cancelled = false
    /// The core whose queue runs the reply callback; set when the call is sent.
    weak var core: BusCore?

    init(context: String) {
        self.context = context
    }

    func finish(_ result: Result<[DBusValue], any Error>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result)
    }
}

/// One signal match. Touched only on the bus queue once started.
///
/// Like ``PendingCall``: sd-bus holds it unretained, `BusCore`'s `subscriptions` keeps it alive
/// while the match is installed, and it refers to the core weakly and to no closure of its own.
final class Subscription: @unchecked Sendable {
    let rule: String
    let stream: AsyncThrowingStream<DBusSignal, any Error>.Continuation
    var installed: CheckedContinuation<Void, any Error>?
    var slot: OpaquePointer?
    var removed = false
    /// The core whose queue runs the match callbacks; set when the match is added.
    weak var core: BusCore?

    init(rule: String, stream: AsyncThrowingStream<DBusSignal, any Error>.Continuation) {
        self.rule = rule
        self.stream = stream
    }

    func finishInstall(_ result: Result<Void, any Error>) {
        guard let installed else { return }
        self.installed = nil
        installed.resume(with: result)
    }
}

/// One exported object. Touched only on the bus queue once added; held like ``Subscription``.
final class ExportedObject: @unchecked Sendable {
    let path: String
    let stream: AsyncThrowingStream<DBusIncomingCall, any Error>.Continuation
    var slot: OpaquePointer?
    var removed = false
    /// The core whose queue runs the object's callback; set when it is added.
    weak var core: BusCore?

    init(path: String, stream: AsyncThrowingStream<DBusIncomingCall, any Error>.Continuation) {
        self.path = path
        self.stream = stream
    }
}

/// A method call message kept until it is answered. sd-bus objects are not thread-safe, so the
/// message is only touched on its core's queue (or alone, once the core is gone).
final class CallMessage: @unchecked Sendable {
    let message: OpaquePointer
    private let sd: SDBus

    init(_ message: OpaquePointer, sd: SDBus) {
        self.sd = sd
        // sd_bus_message_ref returns the message it was given.
        self.message = sd.messageRef(message) ?? message
    }

    deinit {
        sd.messageUnref(message)
    }
}

/// The sd-bus state. `@unchecked Sendable` because every mutable field is confined to `queue`:
/// only code running on `queue` reads or writes them.
final class BusCore: @unchecked Sendable {
    let queue = DispatchQueue(label: "healthgate.dbus")
    let dropped = Atomic<Int>(0)
    let open = Atomic<Bool>(true)
    private var bus: OpaquePointer?
    private var readSource: ReadinessSource?
    /// Suspended except while sd_bus_get_events asks for POLLOUT.
    private var writeSource: ReadinessSource?
    private var timer: (any DispatchSourceTimer)?
    private var pendingCalls: [ObjectIdentifier: PendingCall] = [:]
    private var subscriptions: [ObjectIdentifier: Subscription] = [:]
    private var exports: [ObjectIdentifier: ExportedObject] = [:]
    private var closedError: DBusError?

    /// The sd-bus entry points.
    let sd: SDBus
    /// Reads and writes message arguments through them.
    let coding: DBusMessageCoding

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
            let result: Int32 = address.withCString { text in
                var result = sd.setAddress(opened, text)
                if result >= 0 { result = sd.setBusClient(opened, 1) }
                if result >= 0 { result = sd.start(opened) }
                return result
            }
            if result < 0 {
                sd.unref(opened)
                throw DBusError(errno: -result, "connecting to the bus at \(address)")
            }
        } else {
            try Self.check(sd.openSystem(&opened), "connecting to the system bus")
        }
        bus = opened
        queue.sync { startSources() }
    }

    private static func check(_ result: Int32, _ what: String) throws(DBusError) {
        if result < 0 { throw DBusError(errno: -result, what) }
    }

    // MARK: Driving the bus (on `queue`)

    private func startSources() {
        guard let bus else { return }
        let fd = sd.getFd(bus)
        guard fd >= 0 else {
            fail(DBusError(errno: -fd, "sd_bus_get_fd"))
            return
        }
        // sd-bus owns the descriptor and closes it with the bus: nothing to do on cancel.
        readSource = ReadinessSource(descriptor: fd, queue: queue) { [unowned self] in pump() }
        let write = ReadinessSource(descriptor: fd, event: .writable, queue: queue) { [unowned self] in pump() }
        write.suspend()
        writeSource = write
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in pump() }
        timer.schedule(deadline: .distantFuture)
        timer.resume()
        self.timer = timer
        pump()
    }

    /// Processes everything sd-bus has, then re-arms the sources (sd_bus_process(3),
    /// sd_bus_get_events(3), sd_bus_get_timeout(3)).
    private func pump() {
        while let bus {
            let result = sd.process(bus, nil)
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
        if wantWrite { writeSource?.resume() } else { writeSource?.suspend() }
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
    private func fail(_ error: DBusError) {
        guard closedError == nil else { return }
        closedError = error
        open.store(false, ordering: .relaxed)
        let calls = pendingCalls.values
        pendingCalls.removeAll()
        for call in calls {
            call.slot = call.slot.flatMap { sd.slotUnref($0) }
            call.finish(.failure(error.with(context: call.context)))
        }
        let subs = subscriptions.values
        subscriptions.removeAll()
        for subscription in subs {
            subscription.removed = true
            subscription.slot = subscription.slot.flatMap { sd.slotUnref($0) }
            subscription.finishInstall(.failure(error))
            subscription.stream.finish(throwing: error)
        }
        let objects = exports.values
        exports.removeAll()
        for object in objects {
            object.removed = true
            object.slot = object.slot.flatMap { sd.slotUnref($0) }
            object.stream.finish(throwing: error)
        }
        readSource?.cancel()
        writeSource?.cancel()
        timer?.cancel()
        readSource = nil
        writeSource = nil
        timer = nil
        if let bus { sd.closeUnref(bus) }
        bus = nil
    }

    /// The calls and matches in flight, for tests that check they are released.
    func inFlight() -> [AnyObject] {
        queue.sync {
            Array(pendingCalls.values) as [AnyObject] + Array(subscriptions.values) as [AnyObject]
                + Array(exports.values) as [AnyObject]
        }
    }

    func close() {
        queue.async { [self] in
            fail(DBusError(name: DBusError.disconnected, message: "the connection was closed"))
        }
    }

    // MARK: Calls (on `queue`)

    func start(
        _ call: PendingCall, destination: String, path: String, interface: String, member: String,
        arguments: [DBusValue], timeout: Duration?
    ) {
        if call.cancelled {
            call.finish(.failure(CancellationError()))
            return
        }
        guard let bus, closedError == nil else {
            call.finish(.failure((closedError ?? DBusError(name: DBusError.disconnected, message: "closed")).with(context: call.context)))
            return
        }
        do throws(DBusError) {
            var message: OpaquePointer?
            try Self.check(
                sd.messageNewMethodCall(bus, &message, destination, path, interface, member),
                "building the call")
            defer { sd.messageUnref(message) }
            guard let message else { throw DBusError(errno: Errno.outOfMemory.rawValue, "building the call") }
            for argument in arguments {
                try coding.append(argument, to: message)
            }
            let microseconds: UInt64 = timeout.map { duration in
                let (seconds, attoseconds) = duration.components
                return UInt64(max(1, seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
            } ?? 0
            var slot: OpaquePointer?
            let userdata = Unmanaged.passUnretained(call).toOpaque()
            try Self.check(
                sd.callAsync(
                    bus, &slot, message,
                    { reply, userdata, _ in
                        // Runs inside sd_bus_process, on the bus queue.
                        guard let userdata else { return 0 }
                        let call = Unmanaged<PendingCall>.fromOpaque(userdata).takeUnretainedValue()
                        call.core?.complete(call, reply: reply)
                        return 1
                    }, userdata, microseconds),
                "sending the call")
            call.slot = slot
            call.core = self
            pendingCalls[ObjectIdentifier(call)] = call
        } catch {
            call.finish(.failure(error.with(context: call.context)))
            return
        }
        pump()
    }

    fileprivate func complete(_ call: PendingCall, reply: OpaquePointer?) {
        guard pendingCalls.removeValue(forKey: ObjectIdentifier(call)) != nil else { return }
        let result: Result<[DBusValue], any Error>
        if let reply, let error = sd.messageGetError(reply) {
            result = .failure(
                DBusError(
                    name: error.pointee.name.map { String(cString: $0) } ?? DBusError.noReply,
                    message: error.pointee.message.map { String(cString: $0) } ?? "",
                    context: call.context))
        } else if let reply {
            do throws(DBusError) {
                result = .success(try coding.readAll(reply))
            } catch {
                result = .failure(error.with(context: call.context))
            }
        } else {
            result = .failure(DBusError(name: DBusError.noReply, message: "no reply", context: call.context))
        }
        // Unref'ing our own slot inside its callback is allowed: sd-bus holds a reference while
        // it dispatches (sd_bus_slot_unref(3)).
        call.slot = call.slot.flatMap { sd.slotUnref($0) }
        call.finish(result)
    }

    func cancel(_ call: PendingCall) {
        call.cancelled = true
        guard pendingCalls.removeValue(forKey: ObjectIdentifier(call)) != nil else { return }
        call.slot = call.slot.flatMap { sd.slotUnref($0) }
        call.finish(.failure(CancellationError()))
    }

    // MARK: Signals (on `queue`)

    func install(_ subscription: Subscription) {
        if subscription.removed {
            subscription.finishInstall(.failure(CancellationError()))
            return
        }
        guard let bus, closedError == nil else {
            let error = closedError ?? DBusError(name: DBusError.disconnected, message: "closed")
            subscription.finishInstall(.failure(error))
            subscription.stream.finish(throwing: error)
            return
        }
        subscription.core = self
        var slot: OpaquePointer?
        let userdata = Unmanaged.passUnretained(subscription).toOpaque()
        let result = sd.addMatchAsync(
            bus, &slot, subscription.rule,
            { message, userdata, _ in
                guard let userdata, let message else { return 0 }
                let subscription = Unmanaged<Subscription>.fromOpaque(userdata).takeUnretainedValue()
                subscription.core?.deliver(message, to: subscription)
                return 0
            },
            { reply, userdata, _ in
                guard let userdata else { return 0 }
                let subscription = Unmanaged<Subscription>.fromOpaque(userdata).takeUnretainedValue()
                subscription.core?.installed(subscription, reply: reply)
                return 1
            }, userdata)
        if result < 0 {
            let error = DBusError(errno: -result, "adding match \(subscription.rule)")
            subscription.finishInstall(.failure(error))
            subscription.stream.finish(throwing: error)
            return
        }
        subscription.slot = slot
        subscriptions[ObjectIdentifier(subscription)] = subscription
        pump()
    }

    fileprivate func installed(_ subscription: Subscription, reply: OpaquePointer?) {
        if let reply, let error = sd.messageGetError(reply) {
            let failure = DBusError(
                name: error.pointee.name.map { String(cString: $0) } ?? DBusError.noReply,
                message: error.pointee.message.map { String(cString: $0) } ?? "",
                context: "adding match \(subscription.rule)")
            subscription.finishInstall(.failure(failure))
            subscription.stream.finish(throwing: failure)
            remove(subscription)
            return
        }
        subscription.finishInstall(.success(()))
    }

    fileprivate func deliver(_ message: OpaquePointer, to subscription: Subscription) {
        guard !subscription.removed else { return }
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        do throws(DBusError) {
            let signal = DBusSignal(
                sender: text(sd.messageGetSender(message)),
                path: text(sd.messageGetPath(message)) ?? "",
                interface: text(sd.messageGetInterface(message)) ?? "",
                member: text(sd.messageGetMember(message)) ?? "",
                arguments: try coding.readAll(message))
            if case .dropped = subscription.stream.yield(signal) {
                dropped.add(1, ordering: .relaxed)
            }
        } catch {
            // A signal we cannot decode is counted, not fatal to the subscription.
            dropped.add(1, ordering: .relaxed)
        }
        // sd-bus lets several handlers see one message; rewind for the next one.
        sd.messageRewind(message, 1)
    }

    func remove(_ subscription: Subscription) {
        subscription.removed = true
        subscriptions.removeValue(forKey: ObjectIdentifier(subscription))
        subscription.slot = subscription.slot.flatMap { sd.slotUnref($0) }
        subscription.finishInstall(.failure(CancellationError()))
        subscription.stream.finish()
    }

    func uniqueName() -> Result<String, any Error> {
        guard let bus, closedError == nil else {
            return .failure(closedError ?? DBusError(name: DBusError.disconnected, message: "closed"))
        }
        var name: UnsafePointer<CChar>?
        let result = sd.getUniqueName(bus, &name)
        guard result >= 0, let name else { return .failure(DBusError(errno: -result, "sd_bus_get_unique_name")) }
        return .success(String(cString: name))
    }

    // MARK: Exported objects (on `queue`)

    func add(_ object: ExportedObject) -> Result<Void, any Error> {
        if object.removed { return .failure(CancellationError()) }
        guard let bus, closedError == nil else {
            let error = closedError ?? DBusError(name: DBusError.disconnected, message: "closed")
            object.stream.finish(throwing: error)
            return .failure(error)
        }
        object.core = self
        var slot: OpaquePointer?
        let userdata = Unmanaged.passUnretained(object).toOpaque()
        let result = sd.addObject(
            bus, &slot, object.path,
            { message, userdata, _ in
                // Runs inside sd_bus_process, on the bus queue.
                guard let userdata, let message else { return 0 }
                let object = Unmanaged<ExportedObject>.fromOpaque(userdata).takeUnretainedValue()
                guard let core = object.core, core.sd.messageIsMethodCall(message, nil, nil) > 0 else { return 0 }
                return core.receive(message, for: object)
            }, userdata)
        if result < 0 {
            let error = DBusError(errno: -result, "exporting \(object.path)")
            object.stream.finish(throwing: error)
            return .failure(error)
        }
        object.slot = slot
        exports[ObjectIdentifier(object)] = object
        return .success(())
    }

    /// Hands one method call to the object's stream. Returns 1: the call is ours to answer
    /// (an undecodable one is answered here with InvalidArgs).
    fileprivate func receive(_ message: OpaquePointer, for object: ExportedObject) -> Int32 {
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        let kept = CallMessage(message, sd: sd)
        let answer: @Sendable (DBusIncomingCall.Answer) -> Void = { [weak self] outcome in
            guard let self else { return }
            queue.async { self.answer(kept, with: outcome) }
        }
        do throws(DBusError) {
            let call = DBusIncomingCall(
                sender: text(sd.messageGetSender(message)), path: object.path,
                interface: text(sd.messageGetInterface(message)) ?? "",
                member: text(sd.messageGetMember(message)) ?? "",
                arguments: try coding.readAll(message), answer: answer)
            if object.removed { return 1 }
            // A call the stream cannot take is answered NoReply when `call` is released.
            _ = object.stream.yield(call)
        } catch {
            self.answer(kept, with: .error(name: DBusError.invalidArgs, message: error.description))
        }
        return 1
    }

    private func answer(_ call: CallMessage, with outcome: DBusIncomingCall.Answer) {
        guard let bus, closedError == nil else { return }
        var reply: OpaquePointer?
        switch outcome {
        case .values(let values):
            guard sd.messageNewMethodReturn(call.message, &reply) >= 0, let built = reply else { return }
            do throws(DBusError) {
                for value in values { try coding.append(value, to: built) }
            } catch {
                sd.messageUnref(built)
                answer(call, with: .error(name: DBusError.invalidArgs, message: "cannot encode the reply: \(error)"))
                return
            }
        case .error(let name, let message):
            _ = name.withCString { name in
                message.withCString { message in
                    var error = sd_bus_error(name: name, message: message, _need_free: 0)
                    return sd.messageNewMethodError(call.message, &reply, &error)
                }
            }
        }
        guard let reply else { return }
        sd.send(bus, reply, nil)
        sd.messageUnref(reply)
        pump()
    }

    func remove(_ object: ExportedObject) {
        object.removed = true
        exports.removeValue(forKey: ObjectIdentifier(object))
        object.slot = object.slot.flatMap { sd.slotUnref($0) }
        object.stream.finish()
    }
}
