/// Why a ``UnixLineServer`` could not start serving its socket.
public struct UnixLineServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The step that failed. A struct, so steps can be added without breaking a `switch`.
    public struct Code: Hashable, Sendable {
        /// The step as messages name it, followed by the path: `bind`, `listen on`.
        fileprivate let operation: String

        /// The socket's directory could not be made (`path` is the directory).
        public static let makeDirectory = Code(operation: "mkdir")
        /// The path does not fit a socket address (at most 107 bytes); `errno` is `ENAMETOOLONG`.
        public static let pathTooLong = Code(operation: "socket path too long:")
        /// Another process answers on the path; `errno` is `EADDRINUSE`.
        public static let alreadyServed = Code(operation: "another server is listening on")
        /// socket(2) failed.
        public static let socket = Code(operation: "socket")
        /// bind(2), or giving the socket file its mode, failed.
        public static let bind = Code(operation: "bind")
        /// listen(2) failed.
        public static let listen = Code(operation: "listen on")
    }

    /// The step that failed.
    public var code: Code
    /// The socket path, or its directory when that could not be made.
    public var path: String
    /// The error number the system call set.
    public var errno: Errno

    /// Creates an error.
    public init(_ code: Code, path: String, errno: Errno) {
        self.code = code
        self.path = path
        self.errno = errno
    }

    /// The failed step as the description names it: `mkdir`, `bind`, `listen on`…
    public var operation: String { code.operation }

    /// `operation path: strerror(errno) (SYMBOL)`.
    public var description: String { "\(operation) \(path): \(errno)" }
}
