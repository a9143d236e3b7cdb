import LinuxSystem

/// Why the control socket could not be served or reached.
public struct ControlSocketError: Error, Sendable, CustomStringConvertible {
    /// The socket path, or its directory when that could not be made.
    public var path: String
    /// What was attempted: `bind`, `connect`, `no answer from`…
    public var operation: String
    /// The error number the system call set.
    public var errno: Int32

    /// Creates an error.
    public init(path: String, operation: String, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    /// True when nothing listens on the path (ENOENT, ECONNREFUSED): the daemon is not running.
    public var meansNoDaemon: Bool { errno == Errno.noSuchFile.rawValue || errno == Errno.connectionRefused.rawValue }

    /// The ``operation`` of a request the daemon took and did not answer in time.
    static let unanswered = "no answer from"

    /// True when the daemon took the request but did not answer within the client's time: it
    /// may still carry it out.
    public var meansUnanswered: Bool { operation == Self.unanswered && errno == Errno.timedOut.rawValue }

    /// `operation path: strerror(errno) (SYMBOL)`.
    public var description: String {
        "\(operation) \(path): \(Errno(rawValue: errno))"
    }

    /// Creates an error from a typed error number.
    init(path: String, operation: String, _ error: Errno) {
        self.init(path: path, operation: operation, errno: error.rawValue)
    }
}

extension ControlSocketError {
    /// The line server's failure to start, in the control socket's words: the daemon, not
    /// "another server", is what already listens.
    init(_ error: UnixLineServerError) {
        let operation = error.code == .alreadyServed ? "another healthgate is listening on" : error.operation
        self.init(path: error.path, operation: operation, error.errno)
    }
}
