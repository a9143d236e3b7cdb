import Dispatch
import Glibc
import Synchronization

/// Reads the datagrams of an AcquireNotify socket: one notification per datagram.
///
/// The fd is made non-blocking and read by a `DispatchSource` on its own serial queue with
/// `recv(MSG_DONTWAIT)` until EAGAIN, so nothing blocks the cooperative pool. Each datagram goes
/// to `deliver`, on the socket's queue. End of file (BlueZ closed its end: the link dropped) or a
/// read error stops reading and reports `.disconnected` to `closedByPeer`. The fd is closed
/// exactly once, by the source's cancel handler.
///
/// `@unchecked Sendable`: every stored property is immutable, and the one non-Sendable one, the
/// dispatch source, is safe to resume and cancel from any thread (libdispatch's contract).
final class NotificationSocket: @unchecked Sendable {
    private let queue = DispatchQueue(label: "healthgate.bluez.notify")
    private let source: any DispatchSourceRead
    private let fd: Int32
    private let bufferSize: Int
    private let device: String
    private let deliver: @Sendable ([UInt8]) -> Void
    private let closedByPeer: @Sendable (BLETransportError) -> Void
    private let closed = Atomic<Bool>(false)

    /// Takes ownership of `fd`. Throws when it cannot be made non-blocking (the fd is closed).
    init(
        fd: Int32, mtu: Int, device: String, deliver: @escaping @Sendable ([UInt8]) -> Void,
        closedByPeer: @escaping @Sendable (BLETransportError) -> Void
    ) throws {
        let flags = fcntl(fd, F_GETFL)
        if flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 {
            let code = errno
            Glibc.close(fd)
            throw BLETransportError(.failed, device: device, "cannot make the notify socket non-blocking: errno \(code)")
        }
        self.fd = fd
        // The payload is at most MTU - 3 bytes (ATT_HANDLE_VALUE_NTF header); a larger buffer
        // guards against a peer that sends more than it announced (a datagram longer than the
        // buffer would be truncated silently).
        bufferSize = max(mtu, 23) + 64
        self.device = device
        self.deliver = deliver
        self.closedByPeer = closedByPeer
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setCancelHandler { Glibc.close(fd) }
    }

    /// Starts reading.
    func start() {
        source.setEventHandler { [self] in drain() }
        source.resume()
    }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        while !closed.load(ordering: .relaxed) {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                deliver(Array(buffer[0..<count]))
                continue
            }
            if count == 0 {
                closeByPeer(BLETransportError(.disconnected, device: device, "the notification socket was closed"))
                return
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return
            default:
                let code = errno
                closeByPeer(BLETransportError(.disconnected, device: device, "notification socket: errno \(code)"))
                return
            }
        }
    }

    /// Stops reading and closes the fd. Safe to call more than once, from any thread.
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        source.cancel()
    }

    private func closeByPeer(_ error: BLETransportError) {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        source.cancel()
        closedByPeer(error)
    }
}
