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
    /// Writes all of `bytes` (short control messages such as an identification request).
    func write(_ bytes: [UInt8]) throws(SystemError)
    /// Closes the connection; a running reader ends with ``ByteStreamEnd/closed``. Idempotent.
    func close()
}
