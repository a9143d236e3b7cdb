#if canImport(Glibc)
import Glibc
#endif

/// Why the scale's port or file cannot be read, with its path.
struct ScaleInputError: Error, CustomStringConvertible {
    enum Code {
        /// A system call failed with this errno.
        case system(call: String, errno: Int32)
        /// The path is none of a tty, a FIFO or a regular file.
        case unsupported(what: String)
        /// The serial line ended: the scale's adapter was unplugged, or the line hung up.
        case lineClosed
    }

    var code: Code
    var path: String

    var description: String {
        switch code {
        case .system(let call, let errno): "\(call) \(path): \(String(cString: strerror(errno)))"
        case .unsupported(let what): "\(path) is \(what), not a tty, a FIFO or a regular file"
        case .lineClosed: "\(path): the serial line ended (unplugged, or hung up)"
        }
    }
}
