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
