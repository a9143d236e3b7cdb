#if canImport(Glibc)
    import Glibc
#endif

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
    public var meansNoDaemon: Bool { errno == ENOENT || errno == ECONNREFUSED }

    /// `operation path: strerror(errno)`.
    public var description: String {
        "\(operation) \(path): \(String(cString: strerror(errno)))"
    }
}
