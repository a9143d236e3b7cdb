#if canImport(Glibc)
import Glibc
#endif
import CLinuxSystem
public import Dispatch
import Synchronization

/// An open serial line (a USB CDC-ACM or FTDI tty, a pty, a bound `/dev/rfcommN`) in raw mode.
///
/// ``open(path:configuration:exclusive:)`` opens non-blocking, without becoming the controlling
/// terminal, takes an exclusive lock (TIOCEXCL for other openers, flock(2) for cooperating
/// processes) and applies the ``SerialConfiguration`` with tcsetattr(3). Prefer
/// ``withSerialPort(path:configuration:exclusive:_:)``, which closes the port on every path.
public final class SerialPort: ByteStreamConnection {
    /// The path that was opened.
    public let path: String
    /// The settings applied.
    public let configuration: SerialConfiguration
    private let stream: DescriptorChannel

    public var name: String { path }

    private init(path: String, configuration: SerialConfiguration, descriptor: FileDescriptor) {
        self.path = path
        self.configuration = configuration
        self.stream = DescriptorChannel(descriptor: descriptor, target: path)
    }

    /// Opens and configures `path`.
    /// - Parameter exclusive: lock the line against other openers (TIOCEXCL and flock); a line
    ///   another process holds fails with `EBUSY`.
    /// - Throws: ``SystemError`` naming the step (`open`, `lock`, `tcsetattr`) and the path;
    ///   `EINVAL` for a configuration that fails ``SerialConfiguration/validate()``.
    public static func open(
        path: String, configuration: SerialConfiguration, exclusive: Bool = true
    ) throws(SystemError) -> SerialPort {
        do {
            try configuration.validate()
        } catch {
            throw SystemError("configure (\(error))", target: path, errno: .invalidArgument)
        }
        let raw: Int32
        do {
            raw = try Errno.retryingInterrupts { hg_open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC) }
        } catch {
            throw SystemError("open", target: path, errno: error)
        }
        let descriptor = FileDescriptor(owning: raw)
        do throws(SystemError) {
            guard isatty(raw) == 1 else { throw SystemError("isatty", target: path, errno: .notATerminal) }
            if exclusive {
                do {
                    try Errno.retryingInterrupts { flock(raw, LOCK_EX | LOCK_NB) }
                } catch {
                    throw SystemError("flock", target: path, errno: error == .wouldBlock ? .busy : error)
                }
                // tty_ioctl(4): TIOCEXCL makes further open(2)s fail with EBUSY (except for root).
                do {
                    try Errno.retryingInterrupts { hg_ioctl_none(raw, UInt(TIOCEXCL)) }
                } catch {
                    throw SystemError("ioctl TIOCEXCL", target: path, errno: error)
                }
            }
            var attributes = termios()
            do {
                try Errno.retryingInterrupts { tcgetattr(raw, &attributes) }
            } catch {
                throw SystemError("tcgetattr", target: path, errno: error)
            }
            Termios.apply(configuration, to: &attributes)
            do {
                try Errno.retryingInterrupts { tcsetattr(raw, TCSANOW, &attributes) }
            } catch {
                throw SystemError("tcsetattr", target: path, errno: error)
            }
        } catch {
            descriptor.close()
            throw error
        }
        return SerialPort(path: path, configuration: configuration, descriptor: descriptor)
    }

    /// The line settings as tcgetattr(3) reports them now.
    public func attributes() throws(SystemError) -> TerminalAttributes {
        do {
            return try terminalAttributes(of: try stream.raw())
        } catch {
            throw SystemError("tcgetattr", target: path, errno: error)
        }
    }

    public func startReading(queue: DispatchQueue) throws(SystemError) -> ByteStreamReader {
        try stream.startReading(queue: queue)
    }

    public func startReading(queue: DispatchQueue, delivery: @escaping ByteStreamReader.Delivery) throws(SystemError) -> ByteStreamReader {
        try stream.startReading(queue: queue, delivery: delivery)
    }

    /// Starts reading in chunks of `chunkSize` bytes. Internal: lets a test make a burst end
    /// exactly on a chunk boundary (a pty's line discipline hands out at most 4095 bytes per
    /// read, so the default 4096-byte chunk is never filled on a pty).
    func startReading(queue: DispatchQueue, chunkSize: Int) throws(SystemError) -> ByteStreamReader {
        try stream.startReading(queue: queue, chunkSize: chunkSize)
    }

    public func write(_ bytes: [UInt8]) throws(SystemError) {
        try stream.write(bytes)
    }

    public func close() {
        stream.close()
    }
}

/// Opens a serial port, runs `body` with it, and closes it on every path: return, throw,
/// cancellation.
public func withSerialPort<R>(
    path: String, configuration: SerialConfiguration, exclusive: Bool = true,
    _ body: (SerialPort) async throws -> R
) async throws -> R {
    let port = try SerialPort.open(path: path, configuration: configuration, exclusive: exclusive)
    defer { port.close() }
    return try await body(port)
}
