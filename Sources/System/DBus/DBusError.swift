import LinuxSystem

/// A D-Bus failure: an error reply from a peer, or a local sd-bus failure.
///
/// `name` is the D-Bus error name (`org.bluez.Error.InProgress`,
/// `org.freedesktop.DBus.Error.ServiceUnknown`, …). Local failures carry `errno` and a name of
/// the form `System.Error.E…`, the convention sd-bus itself uses (sd-bus-errors(3)).
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The D-Bus error name.
    public var name: String
    /// The human-readable message.
    public var message: String
    /// The errno of a local failure, else nil.
    public var errno: Int32?
    /// What was being done: `org.bluez.Device1.Connect on /org/bluez/hci0/dev_…`.
    public var context: String?

    public init(name: String, message: String, errno: Int32? = nil, context: String? = nil) {
        self.name = name
        self.message = message
        self.errno = errno
        self.context = context
    }

    /// A local failure from a negative errno return.
    public init(errno code: Int32, _ what: String) {
        let error = Errno(rawValue: code)
        self.init(name: "System.Error.\(error.symbol ?? "E\(code)")", message: "\(what): \(error.text)", errno: code)
    }

    /// The same error with `context` set.
    public func with(context: String) -> DBusError {
        var copy = self
        copy.context = context
        return copy
    }

    public var description: String {
        (context.map { "\($0): " } ?? "") + "\(name): \(message)"
    }

    /// The bus (or a peer it needs) is not there: no daemon, the name has no owner, or the
    /// connection dropped.
    public var isUnavailable: Bool {
        [Self.serviceUnknown, Self.nameHasNoOwner, Self.noServer, Self.disconnected].contains(name)
            || [Errno.noSuchFile, .connectionRefused, .connectionReset, .notConnected, .permissionDenied]
                .contains(Errno(rawValue: errno ?? 0))
    }

    // Well-known names (D-Bus Specification, "Message Bus Messages"; sd-bus-errors(3)).
    /// No process owns the destination name (bluetoothd is not running).
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    /// A generic failure (here: libsystemd could not be loaded).
    public static let failed = "org.freedesktop.DBus.Error.Failed"
    /// The name has no owner.
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    /// The bus could not be reached.
    public static let noServer = "org.freedesktop.DBus.Error.NoServer"
    /// The connection to the bus is closed.
    public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
    /// No reply within the timeout, or the connection closed first.
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    /// The peer exports no such object.
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    /// The object has no such method.
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    /// Invalid arguments.
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    /// A message did not have the expected shape.
    public static let invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
}
