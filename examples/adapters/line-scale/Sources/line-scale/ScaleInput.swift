#if canImport(Glibc)
import Glibc
#endif

/// The scale's port or file, open for reading: one file descriptor, closed at deinit.
///
/// Not Sendable: it belongs to the reader's queue, which opens it, reads it and drops it. Its
/// reads block (a tty waits for the scale), which is why they never run on the cooperative pool.
final class ScaleInput {
    /// What the path is.
    enum Kind {
        case regularFile
        case fifo
        case terminal
    }

    let path: String
    let kind: Kind
    private let descriptor: Int32

    private init(path: String, kind: Kind, descriptor: Int32) {
        self.path = path
        self.kind = kind
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Opens `path`: a regular file or a FIFO as it is, a tty in raw mode.
    /// - Throws: ``ScaleInputError`` when it cannot be opened or is something else.
    static func open(_ path: String) throws(ScaleInputError) -> ScaleInput {
        var status = stat()
        guard stat(path, &status) == 0 else { throw ScaleInputError(code: .system(call: "stat", errno: errno), path: path) }
        let kind: Kind
        var flags = O_CLOEXEC | O_NOCTTY
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            kind = .regularFile
            flags |= O_RDONLY
        case S_IFIFO:
            kind = .fifo
            // Open for writing too, as Linux allows (fifo(7)): the open does not wait for a
            // writer, and the read sees no end of file when a writer closes its end, so that one
            // writer after another can feed the scale's lines.
            flags |= O_RDWR
        case S_IFCHR:
            kind = .terminal
            flags |= O_RDONLY
        case S_IFDIR: throw ScaleInputError(code: .unsupported(what: "a directory"), path: path)
        case S_IFSOCK: throw ScaleInputError(code: .unsupported(what: "a socket"), path: path)
        default: throw ScaleInputError(code: .unsupported(what: "a block device"), path: path)
        }
        let descriptor = retrying { Glibc.open(path, flags) }
        guard descriptor >= 0 else { throw ScaleInputError(code: .system(call: "open", errno: errno), path: path) }
        let input = ScaleInput(path: path, kind: kind, descriptor: descriptor)
        if kind == .terminal { try input.makeRaw() }
        return input
    }

    /// Reads the next bytes into `buffer`; 0 at the end of a regular file (or of a hung-up tty).
    func read(into buffer: inout [UInt8]) throws(ScaleInputError) -> Int {
        let count = buffer.withUnsafeMutableBytes { bytes in retrying { Glibc.read(descriptor, bytes.baseAddress, bytes.count) } }
        guard count >= 0 else { throw ScaleInputError(code: .system(call: "read", errno: errno), path: path) }
        return count
    }

    /// Moves to `offset` from the start (a regular file).
    func seek(to offset: Int) throws(ScaleInputError) {
        guard lseek(descriptor, off_t(offset), SEEK_SET) >= 0 else { throw ScaleInputError(code: .system(call: "lseek", errno: errno), path: path) }
    }

    /// The offset the next read starts at (a regular file).
    func position() throws(ScaleInputError) -> Int {
        let offset = lseek(descriptor, 0, SEEK_CUR)
        guard offset >= 0 else { throw ScaleInputError(code: .system(call: "lseek", errno: errno), path: path) }
        return Int(offset)
    }

    /// The file's size now (a regular file).
    func size() throws(ScaleInputError) -> Int {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw ScaleInputError(code: .system(call: "fstat", errno: errno), path: path) }
        return Int(status.st_size)
    }

    /// The byte at `offset`, nil past the end (a regular file); the position is left as it was.
    func byte(at offset: Int) throws(ScaleInputError) -> UInt8? {
        var byte: UInt8 = 0
        let count = retrying { pread(descriptor, &byte, 1, off_t(offset)) }
        guard count >= 0 else { throw ScaleInputError(code: .system(call: "pread", errno: errno), path: path) }
        return count == 1 ? byte : nil
    }

    /// Puts the tty in raw mode (termios(3), cfmakeraw): no echo back to the scale, no line
    /// editing, CR kept as it is, a read returns as soon as a byte is there. The speed and the
    /// framing are left as set (`stty`, or a udev rule): README.md, "A serial port".
    private func makeRaw() throws(ScaleInputError) {
        guard isatty(descriptor) == 1 else { throw ScaleInputError(code: .unsupported(what: "a character device but no tty"), path: path) }
        var settings = termios()
        guard tcgetattr(descriptor, &settings) == 0 else { throw ScaleInputError(code: .system(call: "tcgetattr", errno: errno), path: path) }
        cfmakeraw(&settings)
        guard tcsetattr(descriptor, TCSANOW, &settings) == 0 else {
            throw ScaleInputError(code: .system(call: "tcsetattr", errno: errno), path: path)
        }
    }
}

/// Calls `call` again while it fails with EINTR (signal(7): a read interrupted by a signal
/// handler).
private func retrying<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}
