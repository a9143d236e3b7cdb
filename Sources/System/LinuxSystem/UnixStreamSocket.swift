#if canImport(Glibc)
import Glibc
#endif
import CLinuxSystem

/// Unix-domain stream sockets: the control socket's server and client.
///
/// Every socket is close-on-exec, every call goes through ``Errno/retryingInterrupts(_:)`` so
/// `EINTR` never escapes, and sends never raise SIGPIPE (a peer that hung up gives `EPIPE`).
public enum UnixStreamSocket {
    /// The `sockaddr_un` for `path`.
    /// - Throws: ``Errno/nameTooLong`` when the path does not fit `sun_path` with its NUL.
    static func address(_ path: String) throws(Errno) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw .nameTooLong }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// Whether `path` fits a socket address (at most 107 bytes).
    public static func fits(_ path: String) -> Bool {
        (try? address(path)) != nil
    }

    /// A new unbound stream socket, optionally non-blocking.
    public static func make(nonBlocking: Bool) throws(Errno) -> FileDescriptor {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        return FileDescriptor(owning: try Errno.retryingInterrupts { socket(AF_UNIX, type, 0) })
    }

    /// Binds `socket` to `path` (which must not exist) and gives the file `mode`.
    public static func bind(_ socket: FileDescriptor, to path: String, mode: UInt32) throws(Errno) {
        let fd = try socket.descriptor()
        var address = try address(path)
        try Errno.retryingInterrupts {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        try Errno.retryingInterrupts { chmod(path, mode) }
    }

    /// Starts listening; the kernel caps `backlog` at net.core.somaxconn.
    public static func listen(_ socket: FileDescriptor, backlog: Int32) throws(Errno) {
        let fd = try socket.descriptor()
        try Errno.retryingInterrupts { Glibc.listen(fd, backlog) }
    }

    /// A blocking connection to the socket at `path`. EINTR from connect(2) leaves the
    /// connection in progress and a retry gives EALREADY or EISCONN, so an interrupted connect
    /// counts as failed rather than being retried.
    public static func connect(to path: String) throws(Errno) -> FileDescriptor {
        var address = try address(path)
        let socket = try make(nonBlocking: false)
        let fd = try socket.descriptor()
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result == -1 {
            let error = Errno.lastError
            socket.close()
            throw error
        }
        return socket
    }

    /// Accepts one pending connection as a non-blocking, close-on-exec descriptor, or returns nil
    /// when none is pending. Connections the peer aborted before they were accepted are skipped.
    /// - Throws: `EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM` and the like: the pending connection
    ///   stays queued, so the caller should wait before trying again.
    public static func accept(_ listener: FileDescriptor) throws(Errno) -> FileDescriptor? {
        let fd = try listener.descriptor()
        while true {
            do {
                let accepted = try Errno.retryingInterrupts {
                    hg_accept4(fd, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                }
                return FileDescriptor(owning: accepted)
            } catch .wouldBlock {
                return nil
            } catch .connectionAborted {
                continue
            }
        }
    }

    /// Sends some of `bytes` without blocking; returns how many the kernel took (`EAGAIN` when
    /// none fit).
    public static func sendSome(_ socket: FileDescriptor, _ bytes: some Collection<UInt8>) throws(Errno) -> Int {
        let fd = try socket.descriptor()
        let array = Array(bytes)
        guard !array.isEmpty else { return 0 }
        return try Errno.retryingInterrupts {
            array.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        }
    }

    /// Sends all of `bytes`, polling while the socket is full until `deadline`, then `ETIMEDOUT`.
    /// Blocking: for a client on its own queue.
    public static func sendAll(_ socket: FileDescriptor, _ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            do {
                offset += try sendSome(socket, bytes[offset...])
            } catch .wouldBlock {
                guard ContinuousClock.now < deadline else { throw .timedOut }
                _ = try waitReadable(socket, events: Int16(POLLOUT), timeout: .milliseconds(100))
            }
        }
    }

    /// Waits until `socket` is readable or `timeout` passes; returns whether it is readable.
    /// Blocking: for a client on its own queue.
    public static func waitReadable(_ socket: FileDescriptor, timeout: Duration) throws(Errno) -> Bool {
        try waitReadable(socket, events: Int16(POLLIN), timeout: timeout)
    }

    private static func waitReadable(_ socket: FileDescriptor, events: Int16, timeout: Duration) throws(Errno) -> Bool {
        let fd = try socket.descriptor()
        var entry = pollfd(fd: fd, events: events, revents: 0)
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000
            + timeout.components.attoseconds / 1_000_000_000_000_000 + 1)
        return try Errno.retryingInterrupts { poll(&entry, 1, milliseconds) } > 0
    }
}
