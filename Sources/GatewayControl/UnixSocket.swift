import LinuxSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Small helpers over Unix-domain stream sockets, for the control server and its client.
///
/// Every call goes through ``Errno/retryingInterrupts(_:)``, so `EINTR` never escapes.
enum UnixSocket {
    /// The `sockaddr_un` for `path`.
    /// - Throws: `ENAMETOOLONG` when the path does not fit `sun_path` with its terminating NUL.
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

    /// A new stream socket with close-on-exec set, optionally non-blocking.
    static func make(path: String, nonBlocking: Bool) throws(ControlSocketError) -> FileDescriptor {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        do {
            return FileDescriptor(owning: try Errno.retryingInterrupts { socket(AF_UNIX, type, 0) })
        } catch {
            throw ControlSocketError(path: path, operation: "socket", errno: error.rawValue)
        }
    }

    /// A blocking connect to `path`. For clients and the liveness probe.
    static func connect(path: String) throws(ControlSocketError) -> FileDescriptor {
        let socket = try make(path: path, nonBlocking: false)
        var address = try address(path)
        do {
            // EINTR from connect(2) leaves the connection in progress; retrying gives EALREADY
            // or EISCONN, so a blocking connect interrupted by a signal is treated as failed.
            let fd = socket.rawValue ?? -1
            _ = try Errno.retryingInterrupts {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
        } catch {
            socket.close()
            throw ControlSocketError(path: path, operation: "connect", errno: error.rawValue)
        }
        return socket
    }

    /// Sends some of `bytes` without blocking and without SIGPIPE (a client that hung up gives
    /// `EPIPE` instead of killing the daemon). Returns how many bytes the kernel took.
    static func sendSome(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        return try Errno.retryingInterrupts {
            send(fd, base, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
    }

    /// Writes all bytes, polling until `deadline` while the socket is full. Blocking: for the
    /// command-line client only, which runs it on a Dispatch queue.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, deadline: ContinuousClock.Instant) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            do {
                offset += try sendSome(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            } catch .wouldBlock where ContinuousClock.now < deadline {
                var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                try Errno.retryingInterrupts { poll(&descriptor, 1, 100) }
            }
        }
    }
}
