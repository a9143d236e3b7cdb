import AsyncPrimitives
import Synchronization

/// A client connection to a D-Bus message bus, over sd-bus.
///
/// The connection's state belongs to an actor on a serial `DispatchQueue` (``BusCore``, on a
/// ``AsyncPrimitives/QueueExecutor``); one `ReadinessSource` on the bus's non-blocking fd, for
/// reading and for writing while `sd_bus_get_events` asks, and a timer from `sd_bus_get_timeout`, run
/// `sd_bus_process` until it returns 0. Async callers suspend on continuations, so no sd-bus
/// call ever runs on the cooperative thread pool.
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
    /// ``open(address:library:)`` instead.
    /// Throws ``DBusError`` when the bus cannot be reached (`isUnavailable` is then true), or
    /// when libsystemd cannot be loaded (the message names it and what to install).
    /// - Parameter library: libsystemd, loaded here the first time.
    public init(address: String? = nil, library: SDBusLibrary = SDBusLibrary()) throws(DBusError) {
        core = try BusCore(address: address, library: library)
        core.startDriving()
    }

    /// Opens a connection like ``init(address:library:)``, with the blocking connect and
    /// handshake on a queue of its own, so the calling task suspends instead of holding a
    /// cooperative thread.
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
        let pending = PendingCall(context: "\(interface).\(member) on \(path)", core: core)
        return try await withTaskCancellationHandler {
            try await core.call(
                pending, destination: destination, path: path, interface: interface, member: member,
                arguments: arguments, timeout: timeout)
        } onCancel: {
            core.enqueue { $0.cancel(pending) }
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
        try await signals(matchingAny: [rule], bufferLimit: bufferLimit)
    }

    /// Subscribes to the signals any of `rules` matches, on one stream in the order the bus sent
    /// them (``signals(matching:bufferLimit:)``). The rules must not overlap: a signal two of
    /// them match arrives twice. Returns once every match is installed; ends, and removes them
    /// all, as one.
    public func signals(
        matchingAny rules: [DBusMatchRule], bufferLimit: Int = 4096
    ) async throws -> AsyncThrowingStream<DBusSignal, any Error> {
        let (stream, continuation) = AsyncThrowingStream<DBusSignal, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(bufferLimit))
        let subscriptions = rules.map { Subscription(rule: $0.description, stream: continuation, core: core) }
        let removeAll: @Sendable () -> Void = { [core] in
            core.enqueue { core in for subscription in subscriptions { core.remove(subscription) } }
        }
        continuation.onTermination = { _ in removeAll() }
        do {
            try await withTaskCancellationHandler {
                for subscription in subscriptions { try await core.install(subscription) }
            } onCancel: {
                removeAll()
            }
        } catch {
            removeAll()
            throw error
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
        let object = ExportedObject(path: path, stream: continuation, core: core)
        continuation.onTermination = { [core] _ in
            core.enqueue { $0.remove(object) }
        }
        try await core.add(object)
        return stream
    }

    /// The name the bus gave this connection (`:1.42`): where peers send calls to the objects it
    /// exports.
    public func uniqueName() async throws -> String {
        try await core.uniqueName()
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
