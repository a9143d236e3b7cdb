import Dispatch
import Glibc
import Synchronization

/// Reads the datagrams of an AcquireNotify socket: one notification per datagram.
///
/// The fd is made non-blocking and read by a `DispatchSource` on its own serial queue with
/// `recv(MSG_DONTWAIT)` until EAGAIN, so nothing blocks the cooperative pool. End of file (BlueZ
/// closed its end: the link dropped) finishes the stream with `.disconnected`. The fd is closed
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
    private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    private let closed = Atomic<Bool>(false)

    /// Takes ownership of `fd`. Throws when it cannot be made non-blocking (the fd is closed).
    init(fd: Int32, mtu: Int, device: String, continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation) throws {
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
        self.continuation = continuation
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
                continuation.yield(Array(buffer[0..<count]))
                continue
            }
            if count == 0 {
                close(with: BLETransportError(.disconnected, device: device, "the notification socket was closed"))
                return
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return
            default:
                let code = errno
                close(with: BLETransportError(.disconnected, device: device, "notification socket: errno \(code)"))
                return
            }
        }
    }

    /// Stops reading and closes the fd; finishes the stream with `error` (or normally when nil).
    func close(with error: (any Error)?) {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        source.cancel()
        if let error { continuation.finish(throwing: error) } else { continuation.finish() }
    }
}
