import Synchronization
public import Dispatch

/// A bidirectional byte connection to a device: a serial port, a pty, an RFCOMM socket.
///
/// Every connection feeds the same reader (``ByteStreamReader``), so a protocol decoder does not
/// know which transport carries it. Thread-safe.
public protocol ByteStreamConnection: Sendable {
    /// A label for logs: the path or the Bluetooth address and channel.
    var name: String { get }
    /// Starts reading on `queue`. Call once; the reader owns the descriptor from then on and
    /// closes it when the stream ends or ``close()`` is called.
    func startReading(queue: DispatchQueue) throws(SystemError) -> ByteStreamReader
    /// Starts reading on `queue`, handing each event to `delivery` as it is read
    /// (``ByteStreamReader/Delivery``) instead of the reader's `events`.
    func startReading(queue: DispatchQueue, delivery: @escaping ByteStreamReader.Delivery) throws(SystemError) -> ByteStreamReader
    /// Writes all of `bytes` (short control messages such as an identification request).
    func write(_ bytes: [UInt8]) throws(SystemError)
    /// Closes the connection; a running reader ends with ``ByteStreamEnd/closed``. Idempotent.
    func close()
}

/// The part every ``ByteStreamConnection`` shares: an owned descriptor that is written to
/// directly, and read through one ``ByteStreamReader`` that takes ownership once started.
final class DescriptorChannel: Sendable {
    private let descriptor: FileDescriptor
    private let reader = Mutex<ByteStreamReader?>(nil)
    /// The path or address used in errors.
    let target: String

    init(descriptor: FileDescriptor, target: String) {
        self.descriptor = descriptor
        self.target = target
    }

    /// The raw descriptor, for ioctls and termios calls.
    func raw() throws(Errno) -> Int32 { try descriptor.descriptor() }

    func startReading(
        queue: DispatchQueue, chunkSize: Int = 4096, delivery: ByteStreamReader.Delivery? = nil
    ) throws(SystemError) -> ByteStreamReader {
        do {
            let reader = try ByteStreamReader(descriptor: descriptor, queue: queue, chunkSize: chunkSize, delivery: delivery)
            self.reader.withLock { $0 = reader }
            return reader
        } catch {
            throw SystemError("read", target: target, errno: error)
        }
    }

    func write(_ bytes: [UInt8]) throws(SystemError) {
        do {
            try descriptor.writeAll(bytes)
        } catch {
            throw SystemError("write", target: target, errno: error)
        }
    }

    /// Cancels the reader, which closes the descriptor, or closes it directly if none started.
    func close() {
        if let reader = reader.withLock({ $0 }) {
            reader.cancel()
        } else {
            descriptor.close()
        }
    }
}
