#if canImport(Glibc)
import Glibc
#endif
import CLinuxSystem
import Synchronization

/// An owned open file descriptor that is closed exactly once.
///
/// Ownership: the instance owns the descriptor from `init(owning:)` until ``close()`` (or until
/// it is deinitialized, which closes it if nobody did). Every operation after `close()` throws
/// `EBADF`. Thread-safe; reads and writes never block when the descriptor is non-blocking.
public final class FileDescriptor: Sendable {
    private let storage: Mutex<Int32>

    /// Takes ownership of `rawValue`.
    public init(owning rawValue: Int32) {
        storage = Mutex(rawValue)
    }

    deinit {
        let fd = storage.withLock { $0 }
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    /// The raw descriptor number, or nil once closed. For handing to a DispatchSource or a C
    /// library; do not close it behind this object's back.
    public var rawValue: Int32? {
        let fd = storage.withLock { $0 }
        return fd >= 0 ? fd : nil
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { rawValue == nil }

    /// Closes the descriptor; later calls do nothing. close(2) is not retried on EINTR: on Linux
    /// the descriptor is released even then, and retrying could close a reused number.
    public func close() {
        let fd = storage.withLock { fd -> Int32 in
            let old = fd
            fd = -1
            return old
        }
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    /// Gives up ownership without closing (for a DispatchSource cancel handler that closes it).
    /// Returns the descriptor, or nil if already closed or released.
    public func release() -> Int32? {
        storage.withLock { fd in
            let old = fd
            fd = -1
            return old >= 0 ? old : nil
        }
    }

    func descriptor() throws(Errno) -> Int32 {
        guard let fd = rawValue else { throw .badFileDescriptor }
        return fd
    }

    /// A close-on-exec duplicate of `rawValue` numbered 3 or above, for a descriptor another
    /// library owns and will close (a unix fd inside a D-Bus message).
    public static func duplicate(_ rawValue: Int32) throws(Errno) -> Int32 {
        try Errno.retryingInterrupts { hg_fcntl_dupfd_cloexec(rawValue, 3) }
    }

    /// Closes a raw number that no ``FileDescriptor`` owns (one handed over to a C library's
    /// copy). Not retried on EINTR, for the reason given at ``close()``.
    public static func closeRaw(_ rawValue: Int32) {
        _ = Glibc.close(rawValue)
    }

    /// Sets or clears `O_NONBLOCK`.
    public func setNonBlocking(_ enabled: Bool = true) throws(Errno) {
        let fd = try descriptor()
        let flags = try Errno.retryingInterrupts { hg_fcntl_getfl(fd) }
        let wanted = enabled ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        if wanted != flags { try Errno.retryingInterrupts { hg_fcntl_setfl(fd, wanted) } }
    }

    /// Reads up to `maximum` bytes. Returns an empty array at end of file; throws `EAGAIN`
    /// (``Errno/wouldBlock``) when a non-blocking descriptor has nothing to read.
    public func read(maximum: Int = 4096) throws(Errno) -> [UInt8] {
        let fd = try descriptor()
        var buffer = [UInt8](repeating: 0, count: maximum)
        let count = try Errno.retryingInterrupts {
            buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        }
        buffer.removeSubrange(count...)
        return buffer
    }

    /// Writes some of `bytes`; returns how many were written (may be fewer than asked).
    public func writeSome(_ bytes: some Collection<UInt8>) throws(Errno) -> Int {
        let fd = try descriptor()
        let array = Array(bytes)
        return try Errno.retryingInterrupts {
            array.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        }
    }

    /// Writes all of `bytes`, waiting with poll(2) when a non-blocking descriptor is full.
    /// Blocking: call it from a DispatchQueue or for short control messages only (a few bytes to
    /// a tty whose output buffer is empty does not wait).
    public func writeAll(_ bytes: some Collection<UInt8>) throws(Errno) {
        var remaining = Array(bytes)[...]
        while !remaining.isEmpty {
            do {
                let written = try writeSome(remaining)
                remaining = remaining.dropFirst(written)
            } catch let error {
                guard error == .wouldBlock else { throw error }
                let fd = try descriptor()
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                try Errno.retryingInterrupts { poll(&entry, 1, 1000) }
            }
        }
    }
}
