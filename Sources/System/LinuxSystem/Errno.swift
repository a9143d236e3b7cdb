#if canImport(Glibc)
import Glibc
#endif
import CLinuxSystem

/// A POSIX error number, as set by a failed system call (errno(3)).
///
/// Wrappers in this module throw `Errno` with typed throws; callers that need context (a path,
/// an operation) wrap it in ``SystemError``. `EINTR` never escapes: ``Errno/retryingInterrupts(_:)``
/// repeats the call.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw error number.
    public let rawValue: Int32

    /// Wraps a raw error number.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    public static var lastError: Errno { Errno(rawValue: hg_errno()) }

    /// `strerror(3)` text plus the symbolic code, e.g. `No such file or directory (ENOENT)`.
    public var description: String {
        "\(text) (\(symbol ?? "errno \(rawValue)"))"
    }

    /// `strerror(3)` text alone, e.g. `No such file or directory`.
    public var text: String {
        strerror(rawValue).map { String(cString: $0) } ?? "error \(rawValue)"
    }

    /// The symbolic name of the common codes this module reasons about.
    public var symbol: String? {
        switch self {
        case .interrupted: "EINTR"
        case .wouldBlock: "EAGAIN"
        case .noSuchFile: "ENOENT"
        case .ioError: "EIO"
        case .noSuchDevice: "ENODEV"
        case .noSuchDeviceOrAddress: "ENXIO"
        case .busy: "EBUSY"
        case .permissionDenied: "EACCES"
        case .badFileDescriptor: "EBADF"
        case .inProgress: "EINPROGRESS"
        case .addressFamilyNotSupported: "EAFNOSUPPORT"
        case .connectionRefused: "ECONNREFUSED"
        case .hostDown: "EHOSTDOWN"
        case .timedOut: "ETIMEDOUT"
        case .invalidArgument: "EINVAL"
        case .notATerminal: "ENOTTY"
        case .addressInUse: "EADDRINUSE"
        case .nameTooLong: "ENAMETOOLONG"
        case .fileExists: "EEXIST"
        case .connectionAborted: "ECONNABORTED"
        case .connectionReset: "ECONNRESET"
        case .notConnected: "ENOTCONN"
        case .outOfMemory: "ENOMEM"
        case .cancelled: "ECANCELED"
        case .badMessage: "EBADMSG"
        default: nil
        }
    }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let ioError = Errno(rawValue: EIO)
    public static let noSuchDevice = Errno(rawValue: ENODEV)
    public static let noSuchDeviceOrAddress = Errno(rawValue: ENXIO)
    public static let busy = Errno(rawValue: EBUSY)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    public static let inProgress = Errno(rawValue: EINPROGRESS)
    public static let addressFamilyNotSupported = Errno(rawValue: EAFNOSUPPORT)
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    public static let hostDown = Errno(rawValue: EHOSTDOWN)
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let notATerminal = Errno(rawValue: ENOTTY)
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    public static let fileExists = Errno(rawValue: EEXIST)
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    public static let notConnected = Errno(rawValue: ENOTCONN)
    public static let outOfMemory = Errno(rawValue: ENOMEM)
    public static let cancelled = Errno(rawValue: ECANCELED)
    public static let badMessage = Errno(rawValue: EBADMSG)

    /// Whether the error means the device went away: a hung-up tty (`EIO`), a removed USB device
    /// (`ENODEV`, `ENXIO`). tty_io.c returns EIO from read/write on a hung-up tty.
    public var meansDeviceGone: Bool {
        self == .ioError || self == .noSuchDevice || self == .noSuchDeviceOrAddress
    }

    /// Runs a system call that returns -1 and sets errno on failure, repeating it on `EINTR`.
    /// Returns the call's non-negative result.
    @discardableResult
    public static func retryingInterrupts<T: FixedWidthInteger>(_ call: () -> T) throws(Errno) -> T {
        while true {
            let result = call()
            if result != -1 { return result }
            let error = Errno.lastError
            if error == .interrupted { continue }
            throw error
        }
    }
}

/// A failed operation on the system, with what was attempted and on what.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was attempted, e.g. `open`, `tcsetattr`, `connect`.
    public var operation: String
    /// The path or address concerned, if any.
    public var target: String?
    /// The underlying error number.
    public var errno: Errno

    /// Creates an error.
    public init(_ operation: String, target: String? = nil, errno: Errno) {
        self.operation = operation
        self.target = target
        self.errno = errno
    }

    public var description: String {
        if let target { return "\(operation) \(target): \(errno)" }
        return "\(operation): \(errno)"
    }
}
