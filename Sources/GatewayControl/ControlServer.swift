public import Dispatch
public import Foundation
public import SampleBus

#if canImport(Glibc)
    import Glibc
#endif

/// Why the control socket could not be served or reached.
public struct ControlSocketError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var operation: String
    public var errno: Int32

    public init(path: String, operation: String, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    /// True when nothing listens on the path (ENOENT, ECONNREFUSED): the daemon is not running.
    public var meansNoDaemon: Bool { errno == ENOENT || errno == ECONNREFUSED }

    public var description: String {
        "\(operation) \(path): \(String(cString: strerror(errno)))"
    }
}

/// The daemon's control socket: a Unix-domain stream socket, mode 0660, one JSON request and one
/// JSON response per line (see ``ControlRequest``).
///
/// Accepting and reading run on a serial DispatchQueue driven by DispatchSources on non-blocking
/// fds; handlers run as tasks and their responses are written back on the queue, in request
/// order per connection.
public final class ControlServer: Sendable {
    private let path: String
    private let handlers: [String: ControlHandler]
    private let logger: Logger
    private let queue = DispatchQueue(label: "healthgate.control")
    private let state = ServerState()

    /// Dispatch sources are not Sendable; this state is only touched on `queue`.
    private final class ServerState: @unchecked Sendable {
        var listener: (any DispatchSourceRead)?
        var connections: [Int32: Connection] = [:]
    }

    /// A client connection's buffers; only touched on `queue`.
    private final class Connection: @unchecked Sendable {
        let fd: Int32
        var input: [UInt8] = []
        var source: (any DispatchSourceRead)?
        var pending: Task<Void, Never>?
        init(fd: Int32) { self.fd = fd }
    }

    /// The longest request line accepted.
    static let maximumLineLength = 1 << 20

    public init(path: String, handlers: [String: ControlHandler], logger: Logger) {
        self.path = path
        self.handlers = handlers
        self.logger = logger
    }

    /// Binds the socket (replacing a stale one) and starts accepting.
    /// - Throws: ``ControlSocketError`` when the directory or socket cannot be made, or another
    ///   daemon is already listening.
    public func start() throws(ControlSocketError) {
        let directory = (path as NSString).deletingLastPathComponent
        if mkdir(directory, 0o750) != 0, errno != EEXIST {
            throw ControlSocketError(path: directory, operation: "mkdir", errno: errno)
        }
        // A live daemon answers a connect; a stale socket file from a crash does not.
        if let probe = try? UnixSocket.connect(path: path) {
            close(probe)
            throw ControlSocketError(path: path, operation: "another healthgate is listening on", errno: EADDRINUSE)
        }
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw ControlSocketError(path: path, operation: "socket", errno: errno) }
        var address = try UnixSocket.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw ControlSocketError(path: path, operation: "bind", errno: code)
        }
        // 0660: the daemon's user and group may talk to it, nobody else (the contract).
        chmod(path, 0o660)
        guard listen(fd, 16) == 0 else {
            let code = errno
            close(fd)
            throw ControlSocketError(path: path, operation: "listen", errno: code)
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.acceptAll(listener: fd) }
        source.setCancelHandler { close(fd) }
        queue.sync { state.listener = source }
        source.resume()
        logger.info("control socket listening on \(path)")
    }

    /// Stops accepting, closes every connection and removes the socket file.
    public func stop() {
        queue.sync {
            state.listener?.cancel()
            state.listener = nil
            let connections = state.connections.values
            state.connections = [:]
            for connection in connections {
                connection.pending?.cancel()
                connection.source?.cancel()
            }
        }
        unlink(path)
    }

    private func acceptAll(listener: Int32) {
        while true {
            // Glibc's module map does not export accept4 (a _GNU_SOURCE symbol): set the flags after.
            let fd = accept(listener, nil, nil)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
            if fd < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK {
                    logger.warning("control socket accept failed: \(String(cString: strerror(errno)))")
                }
                return
            }
            let connection = Connection(fd: fd)
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            connection.source = source
            source.setEventHandler { [weak self] in self?.readAvailable(connection) }
            source.setCancelHandler { close(fd) }
            state.connections[fd] = connection
            source.resume()
        }
    }

    private func readAvailable(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(connection.fd, $0.baseAddress, $0.count) }
            if count > 0 {
                connection.input.append(contentsOf: buffer[0..<count])
                if connection.input.count > Self.maximumLineLength {
                    respond(connection, ControlResponse(ok: false, error: "request line too long"))
                    closeConnection(connection)
                    return
                }
                continue
            }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { break }
            // EOF or error: answer what is complete, then close.
            dispatchLines(connection)
            closeConnection(connection, afterPending: true)
            return
        }
        dispatchLines(connection)
    }

    private func dispatchLines(_ connection: Connection) {
        while let newline = connection.input.firstIndex(of: UInt8(ascii: "\n")) {
            let line = Array(connection.input[..<newline])
            connection.input.removeSubrange(...newline)
            guard !line.allSatisfy({ $0 == 32 || $0 == 13 }) else { continue }
            let previous = connection.pending
            let handlers = handlers
            connection.pending = Task {
                // Responses keep request order on a connection: wait for the previous one.
                await previous?.value
                let response = await Self.handle(line: line, handlers: handlers)
                self.queue.async { self.respond(connection, response) }
            }
        }
    }

    static func handle(line: [UInt8], handlers: [String: ControlHandler]) async -> ControlResponse {
        let request: ControlRequest
        do {
            request = try JSONDecoder().decode(ControlRequest.self, from: Data(line))
        } catch {
            return ControlResponse(ok: false, error: "malformed request: expected one JSON object with \"command\" per line")
        }
        guard let handler = handlers[request.command] else {
            return ControlResponse(
                ok: false,
                error: "unknown command \"\(request.command)\"; known: \(handlers.keys.sorted().joined(separator: ", "))")
        }
        do {
            return ControlResponse(ok: true, result: try await handler(request.arguments ?? .object([:])))
        } catch {
            return ControlResponse(ok: false, error: "\(error)")
        }
    }

    private func respond(_ connection: Connection, _ response: ControlResponse) {
        guard var data = try? JSONEncoder().encode(response) else { return }
        data.append(UInt8(ascii: "\n"))
        // Responses are small; a client that does not read is dropped rather than blocking the queue.
        _ = data.withUnsafeBytes { UnixSocket.writeAll(connection.fd, $0, deadline: .now() + 2) }
    }

    private func closeConnection(_ connection: Connection, afterPending: Bool = false) {
        let finish: @Sendable () -> Void = {
            self.queue.async {
                connection.source?.cancel()
                connection.source = nil
                self.state.connections.removeValue(forKey: connection.fd)
            }
        }
        if afterPending, let pending = connection.pending {
            Task {
                await pending.value
                finish()
            }
        } else {
            finish()
        }
    }
}

/// Small helpers over Unix-domain sockets.
enum UnixSocket {
    static func address(_ path: String) throws(ControlSocketError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw ControlSocketError(path: path, operation: "socket path too long:", errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// A blocking connect to `path`. For clients and the liveness probe.
    static func connect(path: String) throws(ControlSocketError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlSocketError(path: path, operation: "socket", errno: errno) }
        var address = try address(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw ControlSocketError(path: path, operation: "connect", errno: code)
        }
        return fd
    }

    /// Writes all bytes, polling a non-blocking fd until `deadline`. Returns false on failure.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, deadline: DispatchTime) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if written > 0 {
                offset += written
                continue
            }
            if written < 0, errno == EINTR { continue }
            if written < 0, errno == EAGAIN || errno == EWOULDBLOCK, DispatchTime.now() < deadline {
                var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&descriptor, 1, 100)
                continue
            }
            return false
        }
        return true
    }
}
