import CSystemd
import Synchronization

/// A method call another peer made on an object this process exports
/// (``DBusConnection/export(path:bufferLimit:)``), such as bluetoothd calling our pairing agent.
///
/// Answer it exactly once with ``reply(_:)`` or ``fail(name:message:)``; later answers are
/// ignored. A call released unanswered is answered with `org.freedesktop.DBus.Error.NoReply`, so
/// the caller never waits for its own timeout.
public final class DBusIncomingCall: Sendable {
    /// The unique name of the caller (`:1.7`).
    public let sender: String?
    /// The object called.
    public let path: String
    /// The method's interface.
    public let interface: String
    /// The method's name.
    public let member: String
    /// The arguments, decoded.
    public let arguments: [DBusValue]

    private let answer: Mutex<(@Sendable (Answer) -> Void)?>

    enum Answer: Sendable {
        case values([DBusValue])
        case error(name: String, message: String)
    }

    init(
        sender: String?, path: String, interface: String, member: String, arguments: [DBusValue],
        answer: @escaping @Sendable (Answer) -> Void
    ) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        self.answer = Mutex(answer)
    }

    deinit {
        send(.error(name: DBusError.noReply, message: "\(interface).\(member) was not answered"))
    }

    /// Returns `values` to the caller.
    public func reply(_ values: [DBusValue] = []) {
        send(.values(values))
    }

    /// Returns the D-Bus error `name` (`org.bluez.Error.Rejected`, …) to the caller.
    public func fail(name: String, message: String) {
        send(.error(name: name, message: message))
    }

    private func send(_ outcome: Answer) {
        let handler = answer.withLock { handler in
            defer { handler = nil }
            return handler
        }
        handler?(outcome)
    }
}
