#if canImport(Glibc)
import Glibc
#endif
import CLinuxSystem
public import Dispatch

/// A pseudo-terminal pair (pty(7)), for tests and the demo: a program writes "device" bytes to
/// the master and the gateway opens ``slavePath`` like a serial port.
///
/// The pair keeps its own descriptor of the slave open, so that the master never reads `EIO`
/// while the gateway has the slave closed (pty.c reports EIO on the master once every slave
/// descriptor is closed); the slave starts in raw mode, so nothing is echoed or translated
/// before the gateway configures it. ``hangUp()`` closes the master: every slave reader then
/// sees `EIO`, which is how an unplugged device looks.
public final class PseudoTerminal: Sendable {
    /// The master side (the simulated device's end), non-blocking.
    public let master: FileDescriptor
    /// The path of the slave side, `/dev/pts/N`.
    public let slavePath: String
    private let slave: FileDescriptor

    /// Opens a new pair (posix_openpt(3), grantpt, unlockpt, ptsname_r).
    public init() throws(SystemError) {
        let raw: Int32
        do {
            raw = try Errno.retryingInterrupts { hg_posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC) }
        } catch {
            throw SystemError("posix_openpt", errno: error)
        }
        let master = FileDescriptor(owning: raw)
        var name = [CChar](repeating: 0, count: 128)
        do throws(Errno) {
            try Errno.retryingInterrupts { hg_grantpt(raw) }
            try Errno.retryingInterrupts { hg_unlockpt(raw) }
            let result = hg_ptsname_r(raw, &name, name.count)
            if result != 0 { throw Errno(rawValue: result) }
        } catch {
            master.close()
            throw SystemError("unlockpt/ptsname", errno: error)
        }
        let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let slaveRaw: Int32
        do {
            slaveRaw = try Errno.retryingInterrupts { hg_open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC) }
        } catch {
            master.close()
            throw SystemError("open", target: path, errno: error)
        }
        let slave = FileDescriptor(owning: slaveRaw)
        var attributes = termios()
        do throws(Errno) {
            try Errno.retryingInterrupts { tcgetattr(slaveRaw, &attributes) }
            cfmakeraw(&attributes)
            try Errno.retryingInterrupts { tcsetattr(slaveRaw, TCSANOW, &attributes) }
        } catch {
            slave.close()
            master.close()
            throw SystemError("tcsetattr raw", target: path, errno: error)
        }
        self.master = master
        self.slave = slave
        self.slavePath = path
        do {
            try master.setNonBlocking()
        } catch {
            throw SystemError("fcntl O_NONBLOCK", target: "pty master", errno: error)
        }
    }

    /// The slave's settings as tcgetattr(3) reports them: what the gateway configured.
    public func slaveAttributes() throws(SystemError) -> TerminalAttributes {
        do {
            return try terminalAttributes(of: try slave.descriptor())
        } catch {
            throw SystemError("tcgetattr", target: slavePath, errno: error)
        }
    }

    /// Writes to the master: the bytes arrive at the slave.
    public func write(_ bytes: some Collection<UInt8>) throws(SystemError) {
        do {
            try master.writeAll(bytes)
        } catch {
            throw SystemError("write", target: "pty master of \(slavePath)", errno: error)
        }
    }

    /// Bytes the slave side holds for its readers (FIONREAD, tty_ioctl(4)): lets a test wait
    /// until written bytes have reached the line discipline instead of sleeping.
    public func slaveBytesWaiting() throws(SystemError) -> Int {
        var count: Int32 = 0
        do {
            let raw = try slave.descriptor()
            try Errno.retryingInterrupts { hg_ioctl_int_pointer(raw, UInt(FIONREAD), &count) }
        } catch {
            throw SystemError("ioctl FIONREAD", target: slavePath, errno: error)
        }
        return Int(count)
    }

    /// Runs `body` with a reader of the master (what the gateway writes to the slave), read on
    /// `queue`, and cancels the reader when `body` returns or throws; then, when `hangUpAtEnd`,
    /// hangs up (``hangUp()``). The reader leaves the master open.
    /// - Throws: ``SystemError`` when the reader cannot start; otherwise what `body` throws.
    public func withMasterReader<Result>(
        queue: DispatchQueue, hangUpAtEnd: Bool, _ body: (ByteStreamReader) async throws -> Result
    ) async throws -> Result {
        let reader: ByteStreamReader
        do {
            reader = try ByteStreamReader(descriptor: master, queue: queue, closesDescriptor: false)
        } catch {
            throw SystemError("read", target: "pty master of \(slavePath)", errno: error)
        }
        defer {
            reader.cancel()
            if hangUpAtEnd { hangUp() }
        }
        return try await body(reader)
    }

    /// Closes the master: the slave side hangs up. The pair cannot be used afterwards.
    public func hangUp() {
        master.close()
        slave.close()
    }
}
