import BLETransport
import Dispatch
import LinuxSystem

/// Reads the datagrams of an AcquireNotify socket: one notification per datagram.
///
/// A ``DatagramReader`` on the socket's own serial queue reads until `EAGAIN`, so nothing blocks
/// the cooperative pool. Each datagram goes to `deliver`, on that queue. End of file (BlueZ
/// closed its end: the link dropped) or a read error stops reading and reports `.disconnected`
/// to `closedByPeer`. The reader closes the descriptor exactly once.
final class NotificationSocket: Sendable {
    private let reader: DatagramReader
    private let device: String

    /// Takes ownership of `fd`. Throws when it cannot be made non-blocking (the fd is closed).
    init(
        fd: Int32, mtu: Int, device: String, deliver: @escaping @Sendable ([UInt8]) -> Void,
        closedByPeer: @escaping @Sendable (BLETransportError) -> Void
    ) throws {
        self.device = device
        do {
            // The payload is at most MTU - 3 bytes (ATT_HANDLE_VALUE_NTF header); the extra room
            // guards against a peer that sends more than it announced (the kernel would truncate
            // a datagram longer than the buffer without a word).
            reader = try DatagramReader(
                descriptor: FileDescriptor(owning: fd), maximumLength: max(mtu, 23) + 64,
                queue: DispatchQueue(label: "healthgate.bluez.notify"), deliver: deliver,
                ended: { end in
                    switch end {
                    case .endOfFile:
                        closedByPeer(BLETransportError(.disconnected, device: device, "the notification socket was closed"))
                    case .failed(let errno):
                        closedByPeer(BLETransportError(.disconnected, device: device, "notification socket: \(errno)"))
                    }
                })
        } catch {
            throw BLETransportError(.failed, device: device, "cannot make the notify socket non-blocking: \(error)")
        }
    }

    /// Starts reading.
    /// - Throws: `.disconnected` when the socket was closed before it started (the link dropped
    ///   while it was being set up).
    func start() throws(BLETransportError) {
        do {
            try reader.start()
        } catch {
            throw BLETransportError(.disconnected, device: device, "the notification socket closed before reading started: \(error)")
        }
    }

    /// Stops reading and closes the fd. Safe to call more than once, from any thread.
    func close() {
        reader.close()
    }
}
