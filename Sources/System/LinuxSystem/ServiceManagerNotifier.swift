#if canImport(Glibc)
import Glibc
#endif
import CLinuxSystem

/// The service manager's notification socket: systemd's `sd_notify` protocol
/// (sd_notify(3), "Notes"), spoken without libsystemd. Under a unit of `Type=notify` systemd
/// passes the socket's address in `$NOTIFY_SOCKET`, and the watchdog's timeout in
/// `$WATCHDOG_USEC` when the unit sets `WatchdogSec=`; each notification is one datagram of
/// newline-separated `KEY=value` lines (`READY=1`, `WATCHDOG=1`, `STOPPING=1`, `STATUS=…`) sent
/// on a new `AF_UNIX`/`SOCK_DGRAM` socket.
///
/// Addresses: an absolute path, or an abstract socket written with a leading `@` (the `@` stands
/// for the address's leading NUL byte, and the name is not NUL-terminated). Other forms
/// (`vsock:`) are refused when the notifier is made.
public struct ServiceManagerNotifier: Sendable {
    /// `$NOTIFY_SOCKET` as given.
    public let socket: String
    /// The watchdog's timeout (`$WATCHDOG_USEC`, the unit's `WatchdogSec=`) when systemd watches
    /// this process: systemd restarts a service that sends no `WATCHDOG=1` within it. nil when
    /// the variable is missing or zero, or `$WATCHDOG_PID` names another process.
    public let watchdogTimeout: Duration?

    /// Why the environment names no notification socket this notifier can use.
    public struct Unusable: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The notifier `environment` asks for: nil without `$NOTIFY_SOCKET` (not run by systemd
    /// as `Type=notify`). `pid` is the process `$WATCHDOG_PID` must name, this one by default.
    /// - Throws: ``Unusable`` for an address that is neither a path nor an abstract name, or
    ///   that does not fit a socket address.
    public static func from(environment: [String: String], pid: Int32? = nil) throws(Unusable) -> ServiceManagerNotifier? {
        let pid = pid ?? getpid()
        guard let socket = environment["NOTIFY_SOCKET"], !socket.isEmpty else { return nil }
        guard socket.hasPrefix("/") || socket.hasPrefix("@") else {
            throw Unusable(description: "NOTIFY_SOCKET=\(socket) is neither an absolute path nor an abstract socket (@name)")
        }
        do {
            _ = try address(of: socket)
        } catch {
            throw Unusable(description: "NOTIFY_SOCKET=\(socket) does not fit a unix socket address (\(error))")
        }
        var timeout: Duration?
        if let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0,
            environment["WATCHDOG_PID"].map({ Int32($0) == pid }) ?? true
        {
            timeout = .microseconds(microseconds)
        }
        return ServiceManagerNotifier(socket: socket, watchdogTimeout: timeout)
    }

    /// Sends `fields` (`KEY=value` each, no newline inside) as one notification. Never blocks:
    /// callers send from the cooperative pool and from a signal's stop request.
    /// - Throws: ``Errno`` from socket(2) or sendto(2): `ECONNREFUSED` or `ENOENT` when nothing
    ///   listens at the address any more, `EAGAIN` when its queue is full.
    public func send(_ fields: [String]) throws(Errno) {
        let (address, length) = try Self.address(of: socket)
        let descriptor = try Errno.retryingInterrupts {
            Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        defer { FileDescriptor.closeRaw(descriptor) }
        let message = Array(fields.joined(separator: "\n").utf8)
        var target = address
        let sent = try Errno.retryingInterrupts {
            withUnsafePointer(to: &target) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    message.withUnsafeBytes { bytes in
                        sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), socketAddress, length)
                    }
                }
            }
        }
        // A datagram goes whole or not at all (unix(7)); a short count would be a kernel's bug.
        guard sent == message.count else { throw .ioError }
    }

    /// The `sockaddr_un` for `socket` and the length to pass with it: for a path, the path and
    /// its NUL; for `@name`, a NUL then the name, the length ending at the name's last byte.
    static func address(of socket: String) throws(Errno) -> (sockaddr_un, socklen_t) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(socket.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count + (abstract ? 0 : 1) <= capacity else { throw .nameTooLong }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            if !abstract { raw[bytes.count] = 0 }
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? MemoryLayout<sa_family_t>.size
        return (address, socklen_t(pathOffset + bytes.count + (abstract ? 0 : 1)))
    }
}
