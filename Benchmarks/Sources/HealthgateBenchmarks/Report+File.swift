import Foundation
import LinuxSystem

extension Report {
    /// Writes the report to `path` (`--markdown`). A regular file, or a path where nothing is
    /// yet, is written atomically (a temporary file renamed over it), so that a reader never sees
    /// half a report. Anything else (a device such as `/dev/stdout`, a FIFO, a symbolic link) is
    /// opened and written in place: renaming over it would replace it with a regular file (run
    /// as root with `--markdown /dev/null`, the machine's `/dev/null`).
    /// - Throws: Foundation's error for the atomic write, ``SystemError`` naming `path` for the
    ///   other (a directory: `EISDIR`).
    func write(toFile path: String) throws {
        var status = stat()
        let missing = lstat(path, &status) != 0 && errno == ENOENT
        if missing || status.st_mode & S_IFMT == S_IFREG {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        let raw: Int32
        do {
            raw = try Errno.retryingInterrupts { open(path, O_WRONLY | O_TRUNC | O_CLOEXEC) }
        } catch {
            throw SystemError("open", target: path, errno: error)
        }
        let file = FileDescriptor(owning: raw)
        defer { file.close() }
        do {
            try file.writeAll(Array(text.utf8))
        } catch {
            throw SystemError("write", target: path, errno: error)
        }
    }
}
