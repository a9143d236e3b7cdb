#if canImport(Glibc)
import Glibc
#endif
import CLinuxSystem

/// The few path operations the daemon makes with exact modes and typed errors, where
/// Foundation's FileManager would hide the error number or the mode.
public enum FileSystem {
    /// Creates the directory `path` with `mode` (less the umask); an existing one is kept.
    public static func makeDirectory(_ path: String, mode: UInt32) throws(Errno) {
        do {
            try Errno.retryingInterrupts { mkdir(path, mode) }
        } catch .fileExists {}
    }

    /// Removes the file `path`. Throws ``Errno/noSuchFile`` when there is none.
    public static func remove(_ path: String) throws(Errno) {
        try Errno.retryingInterrupts { unlink(path) }
    }

    /// Creates the directory `path` and every missing directory above it, as `mkdir -p` does:
    /// the missing ones above with mode 0777 less the umask, `path` itself with `mode` exactly
    /// (chmod(2) after mkdir(2), whatever the umask), an existing `path` is kept as it is.
    ///
    /// The gateway's start-up creates its directories this way rather than with Foundation's
    /// FileManager, whose code (and the URL parser it brings) would otherwise stay resident in
    /// every gateway for this one call (Benchmarks/README.md, "memory").
    /// - Throws: ``FileSystemError`` naming the directory that could not be created (`path`, or
    ///   one above it).
    public static func makeDirectories(_ path: String, mode: UInt32 = 0o777) throws(FileSystemError) {
        if isDirectory(path) { return }
        let parent = parentDirectory(of: path)
        if parent != path, !isDirectory(parent) {
            try makeDirectories(parent)
        }
        do {
            try Errno.retryingInterrupts { mkdir(path, 0o777) }
        } catch .fileExists where isDirectory(path) {
            return  // Made by someone else meanwhile.
        } catch {
            throw FileSystemError(path: path, errno: error)
        }
        if mode != 0o777 {
            do {
                try Errno.retryingInterrupts { chmod(path, mode) }
            } catch {
                throw FileSystemError(path: path, errno: error)
            }
        }
    }

    /// The directory that holds `path`: its text up to the last `/` (`/` for `/x`, `.` for a
    /// name with no `/`); trailing slashes are ignored.
    public static func parentDirectory(of path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        var end = slash
        while end > 0, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// `path` made absolute against the working directory (getcwd(3)), as a file URL's `path`
    /// gives it; an absolute `path`, or one when the working directory cannot be read, as it is.
    public static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), !path.isEmpty else { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let directory = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return join(directory, path)
    }

    /// `directory` and `name` joined by one `/` (trailing slashes of `directory` dropped).
    public static func join(_ directory: String, _ name: String) -> String {
        var bytes = Array(directory.utf8)
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        let base = String(decoding: bytes, as: UTF8.self)
        return base == "/" ? "/" + name : base + "/" + name
    }

    /// Whether `path` names something (stat(2), following symbolic links), as FileManager's
    /// `fileExists(atPath:)` answers.
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Whether `path` names a directory (stat(2), following symbolic links).
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// The target of the symbolic link `path` (readlink(2)).
    /// - Throws: ``Errno``: `EINVAL` when `path` is not a symbolic link, `ENOENT` when it does
    ///   not exist.
    public static func symbolicLinkTarget(_ path: String) throws(Errno) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let count = try Errno.retryingInterrupts { readlink(path, &buffer, buffer.count) }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The whole content of the file `path`, read with open(2) and read(2).
    /// - Throws: ``Errno`` from opening or reading (`ENOENT`, `EACCES`, `EISDIR`, …).
    public static func contents(of path: String) throws(Errno) -> [UInt8] {
        let file = FileDescriptor(owning: try Errno.retryingInterrupts { hg_open(path, O_RDONLY | O_CLOEXEC) })
        defer { file.close() }
        var contents: [UInt8] = []
        while true {
            let chunk = try file.read(maximum: 65_536)
            if chunk.isEmpty { return contents }
            contents += chunk
        }
    }
}

/// A file operation that failed on a path: the path it failed on and the error number.
public struct FileSystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The path the failing call was given.
    public var path: String
    /// Why it failed.
    public var errno: Errno

    /// Creates an error.
    public init(path: String, errno: Errno) {
        self.path = path
        self.errno = errno
    }

    /// `PATH: TEXT`, e.g. `/var/lib/x: Permission denied`: the words the gateway's messages used
    /// for FileManager's errors.
    public var description: String { "\(path): \(errno.text)" }
}

/// Process-wide settings that only the executable's entry point makes.
public enum ProcessControl {
    /// Adds `bits` to the file mode creation mask, keeping what the caller's mask already
    /// removes. Returns the previous mask.
    @discardableResult
    public static func restrictFileCreationMask(_ bits: UInt32) -> UInt32 {
        let inherited = umask(bits)
        umask(inherited | bits)
        return inherited
    }

    /// The user's home directory from the password database (getpwuid_r(3)), for when `$HOME`
    /// is unset; "/" when the user has no entry.
    public static func homeDirectory() -> String {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let directory = entry.pw_dir else {
            return "/"
        }
        return String(cString: directory)
    }

    /// The host's name (gethostname(2)); nil when it cannot be read.
    public static func hostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }

    /// Ends the process at once with `status`: no atexit handlers, no flushing. For a forced
    /// exit that must not wait for anything another thread holds.
    public static func exitImmediately(_ status: Int32) -> Never {
        _exit(status)
    }
}
