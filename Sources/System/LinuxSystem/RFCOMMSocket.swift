#if canImport(Glibc)
import Glibc
#endif
import CLinuxSystem
public import Dispatch
import AsyncPrimitives

/// A Bluetooth device address, `AA:BB:CC:DD:EE:FF` (most significant byte first, as printed).
public struct BluetoothAddress: Hashable, Sendable, CustomStringConvertible {
    /// The six bytes in printed order.
    public let bytes: [UInt8]

    /// Parses six colon-separated hexadecimal bytes; nil otherwise.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.bytes = bytes
    }

    public var description: String {
        bytes.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }
}

/// A connected RFCOMM (Bluetooth serial port profile) stream socket.
///
/// The socket is made with socket(AF_BLUETOOTH, SOCK_STREAM, BTPROTO_RFCOMM) and connected
/// with an address built here, so libbluetooth (GPL) is never linked. A device already bound
/// with `rfcomm bind` appears as `/dev/rfcommN`: open that with ``SerialPort`` instead. Both
/// feed the same ``ByteStreamReader``.
public final class RFCOMMSocket: ByteStreamConnection {
    // include/net/bluetooth/bluetooth.h and rfcomm.h (kernel UAPI values).
    static let addressFamily: Int32 = 31  // AF_BLUETOOTH
    static let protocolRFCOMM: Int32 = 3  // BTPROTO_RFCOMM

    /// The remote device.
    public let address: BluetoothAddress
    /// The RFCOMM channel, 1–30.
    public let channel: UInt8
    private let stream: DescriptorChannel

    public var name: String { "rfcomm://\(address)/\(channel)" }

    private init(address: BluetoothAddress, channel: UInt8, descriptor: FileDescriptor) {
        self.address = address
        self.channel = channel
        self.stream = DescriptorChannel(descriptor: descriptor, target: "rfcomm://\(address)/\(channel)")
    }

    /// The bytes of a `struct sockaddr_rc` (rfcomm.h): `sa_family_t rc_family` (host order),
    /// `bdaddr_t rc_bdaddr` (6 bytes, least significant first, i.e. the printed order reversed),
    /// `uint8_t rc_channel`, then one byte of padding to the struct's 2-byte alignment, 10 bytes
    /// in all: the kernel's rfcomm_sock_connect rejects anything shorter than its sizeof.
    static func socketAddress(address: BluetoothAddress, channel: UInt8) -> [UInt8] {
        let family = UInt16(addressFamily)
        return withUnsafeBytes(of: family) { Array($0) } + address.bytes.reversed() + [channel, 0]
    }

    /// Connects to `address` on `channel`. Suspends (off the cooperative pool: a DispatchSource
    /// waits for the non-blocking connect) until connected or failed; cancellation closes the
    /// socket and throws `ECANCELED`.
    /// - Throws: ``SystemError``: `EAFNOSUPPORT` without kernel Bluetooth, `EHOSTDOWN`,
    ///   `ECONNREFUSED` (no service on that channel), `EINVAL` for a channel outside 1–30.
    public static func connect(
        address: BluetoothAddress, channel: UInt8, queue: DispatchQueue
    ) async throws(SystemError) -> RFCOMMSocket {
        let target = "\(address) channel \(channel)"
        guard (1...30).contains(channel) else {
            throw SystemError("connect", target: target, errno: .invalidArgument)
        }
        let raw: Int32
        do {
            raw = try Errno.retryingInterrupts {
                socket(addressFamily, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                    | Int32(SOCK_CLOEXEC.rawValue), protocolRFCOMM)
            }
        } catch {
            throw SystemError("socket AF_BLUETOOTH", target: target, errno: error)
        }
        let descriptor = FileDescriptor(owning: raw)
        let bytes = socketAddress(address: address, channel: channel)
        let result = bytes.withUnsafeBytes { buffer in
            Glibc.connect(
                raw, buffer.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(buffer.count))
        }
        if result != 0 {
            let error = Errno.lastError
            guard error == .inProgress || error == .interrupted else {
                descriptor.close()
                throw SystemError("connect", target: target, errno: error)
            }
            // On failure the watch's onCancel has closed the descriptor (or will, on the queue).
            let outcome = await waitForConnection(descriptor, raw, queue: queue)
            if outcome != 0 {
                throw SystemError("connect", target: target, errno: Errno(rawValue: outcome))
            }
        }
        return RFCOMMSocket(address: address, channel: channel, descriptor: descriptor)
    }

    /// Waits for writability, then returns SO_ERROR (connect(2), "EINPROGRESS"); ECANCELED
    /// when the calling task is cancelled first. On any outcome but 0 the descriptor is closed in
    /// the watch's onCancel, once nothing watches it (ReadinessSource's rule).
    private static func waitForConnection(_ descriptor: FileDescriptor, _ fd: Int32, queue: DispatchQueue) async -> Int32 {
        let outcome = AsyncCondition<Int32?>(nil)
        let watch: ReadinessSource
        do {
            watch = try ReadinessSource(
                descriptor: fd, event: .writable, queue: queue,
                // The outcome is settled before cancel(), so this reads the final one.
                onCancel: { if outcome.value != 0 { descriptor.close() } }
            ) {
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                if getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 { error = Errno.lastError.rawValue }
                outcome.update { if $0 == nil { $0 = error } }
            }
        } catch {
            descriptor.close()
            return error.rawValue
        }
        do {
            try await outcome.wait { $0 != nil }
        } catch {
            // Cancelled: settle the outcome first, so that a handler still running cannot turn it
            // into a success after this returned ECANCELED.
            outcome.update { if $0 == nil { $0 = ECANCELED } }
        }
        let settled = outcome.value ?? ECANCELED
        watch.cancel()
        return settled
    }

    public func startReading(queue: DispatchQueue) throws(SystemError) -> ByteStreamReader {
        try stream.startReading(queue: queue)
    }

    public func startReading(queue: DispatchQueue, delivery: @escaping ByteStreamReader.Delivery) throws(SystemError) -> ByteStreamReader {
        try stream.startReading(queue: queue, delivery: delivery)
    }

    public func write(_ bytes: [UInt8]) throws(SystemError) {
        try stream.write(bytes)
    }

    public func close() {
        stream.close()
    }
}
