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
    /// - Returns: the directories it created, the topmost first (empty when `path` existed), so
    ///   that a caller that needs them durable can sync each one's parent
    ///   (``synchronizeDirectory(_:)``).
    /// - Throws: ``FileSystemError`` naming the directory that could not be created (`path`, or
    ///   one above it).
    @discardableResult
    public static func makeDirectories(_ path: String, mode: UInt32 = 0o777) throws(FileSystemError) -> [String] {
        if isDirectory(path) { return [] }
        var created: [String] = []
        let parent = parentDirectory(of: path)
        if parent != path, !isDirectory(parent) {
            created = try makeDirectories(parent)
        }
        do {
            try Errno.retryingInterrupts { mkdir(path, 0o777) }
        } catch .fileExists where isDirectory(path) {
            return created  // Made by someone else meanwhile.
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
        return created + [path]
    }

    /// Flushes the directory `path` to disk (fsync(2) of the directory itself), so that the
    /// names created, renamed or removed in it survive a power cut: syncing a file makes its
    /// content durable, not its name ("an explicit fsync() on a file descriptor for the
    /// directory is also needed", fsync(2)).
    /// - Throws: ``Errno`` from opening or syncing the directory.
    public static func synchronizeDirectory(_ path: String) throws(Errno) {
        let folder = try Errno.retryingInterrupts { hg_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { FileDescriptor.closeRaw(folder) }
        try Errno.retryingInterrupts { fsync(folder) }
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

    /// Writes `bytes` to `path` as a command's `--output` asks, never replacing what the
    /// caller does not own:
    /// - a regular file, or a path where nothing is yet, is written atomically: a temporary
    ///   file in the same directory (created `0600`, so never readable by others, whatever the
    ///   umask), `mode` set exactly (fchmod(2)), fsync(2), then rename(2) over the path and
    ///   fsync of the directory, so a reader sees the old content or the new, never a part;
    /// - a character device (`/dev/null`, `/dev/stdout` on a terminal) or a named pipe
    ///   (`/dev/stdout` on a pipe) is written in place: opened for writing without `O_TRUNC`,
    ///   `O_CREAT` or a rename, so the node and its mode stay as they are;
    /// - a symbolic link is followed to its target, which is written as above; the link
    ///   itself is never replaced (a dangling link creates its target);
    /// - a directory, a block device (a disk) or a socket is refused.
    ///
    /// Blocking (a named pipe waits for its reader): call it from a command, not from the
    /// cooperative pool of a running gateway.
    /// - Returns: how it wrote: a command prints "wrote PATH" for a file, and nothing on its
    ///   standard output after writing into a device or pipe that may be that output.
    /// - Throws: ``FileWriteError`` naming `path`: what is wrong with it, or the step that
    ///   failed and its error number. After a failed atomic write the path is as it was and
    ///   no temporary file is left.
    @discardableResult
    public static func writeFile(_ bytes: [UInt8], to path: String, mode: UInt32) throws(FileWriteError) -> FileWriteMethod {
        var info = stat()
        do {
            // stat(2) follows links, magic ones too (/dev/stdout → /proc/self/fd/1 → a pipe).
            try Errno.retryingInterrupts { stat(path, &info) }
        } catch .noSuchFile {
            try writeAtomically(bytes, to: try creationTarget(of: path), mode: mode, given: path)
            return .replacedAtomically
        } catch {
            throw FileWriteError(path: path, .failed(step: "examine it", errno: error))
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            // The file the path leads to, its links resolved, so that a link stays a link.
            guard let resolved = realpath(path, nil) else {
                throw FileWriteError(path: path, .failed(step: "resolve its symbolic links", errno: .lastError))
            }
            let target = String(cString: resolved)
            free(resolved)
            try writeAtomically(bytes, to: target, mode: mode, given: path)
            return .replacedAtomically
        case S_IFCHR, S_IFIFO:
            try writeInPlace(bytes, to: path)
            return .inPlace
        case S_IFDIR:
            throw FileWriteError(path: path, .isDirectory)
        case S_IFBLK:
            throw FileWriteError(path: path, .notWritable(kind: "a block device"))
        case S_IFSOCK:
            throw FileWriteError(path: path, .notWritable(kind: "a socket"))
        default:
            throw FileWriteError(path: path, .notWritable(kind: "neither a file nor a device"))
        }
    }

    /// Where a new file for `path`, which names nothing, is created: `path` itself, or the end
    /// of the chain of symbolic links it starts (a dangling link), so that the link is kept.
    private static func creationTarget(of path: String) throws(FileWriteError) -> String {
        var target = path
        // As the kernel's own limit on links followed in one lookup (path_resolution(7)).
        for _ in 0..<40 {
            var info = stat()
            guard lstat(target, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return target }
            let next: String
            do {
                next = try symbolicLinkTarget(target)
            } catch {
                throw FileWriteError(path: path, .failed(step: "read the symbolic link \(target)", errno: error))
            }
            target = next.hasPrefix("/") ? next : join(parentDirectory(of: target), next)
        }
        throw FileWriteError(path: path, .failed(step: "follow its symbolic links", errno: Errno(rawValue: ELOOP)))
    }

    /// Writes `bytes` to the device or named pipe `path`, in place.
    private static func writeInPlace(_ bytes: [UInt8], to path: String) throws(FileWriteError) {
        let file: FileDescriptor
        do {
            // O_NOCTTY: a terminal written to does not become the process's controlling one.
            file = FileDescriptor(owning: try Errno.retryingInterrupts { hg_open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY) })
        } catch {
            throw FileWriteError(path: path, .failed(step: "open it for writing", errno: error))
        }
        defer { file.close() }
        do {
            try file.writeAll(bytes)
        } catch {
            throw FileWriteError(path: path, .failed(step: "write", errno: error))
        }
    }

    /// Writes `bytes` to a temporary file beside `target` and renames it over `target`;
    /// errors name `given`, the caller's path.
    private static func writeAtomically(_ bytes: [UInt8], to target: String, mode: UInt32, given: String) throws(FileWriteError) {
        let directory = parentDirectory(of: target)
        let name = String(target.split(separator: "/").last ?? "file")
        var temporary = ""
        var descriptor: Int32 = -1
        // A name nobody else uses, created exclusively (O_EXCL) so that nothing is followed or
        // overwritten; the name's prefix is kept short enough for NAME_MAX with the suffix.
        for _ in 0..<100 where descriptor < 0 {
            temporary = join(directory, ".\(name.prefix(200)).\(String(UInt32.random(in: .min ... .max), radix: 36))~")
            do {
                descriptor = try Errno.retryingInterrupts {
                    hg_open_mode(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                }
            } catch .fileExists {
                continue
            } catch {
                throw FileWriteError(path: given, .failed(step: "create a temporary file in \(directory)", errno: error))
            }
        }
        guard descriptor >= 0 else {
            throw FileWriteError(path: given, .failed(step: "create a temporary file in \(directory)", errno: .fileExists))
        }
        let file = FileDescriptor(owning: descriptor)
        var step = "write"
        do {
            try file.writeAll(bytes)
            step = "set its mode"
            try Errno.retryingInterrupts { fchmod(descriptor, mode) }
            step = "flush it to disk"
            try Errno.retryingInterrupts { fsync(descriptor) }
            file.close()
            step = "rename the temporary file over it"
            try Errno.retryingInterrupts { rename(temporary, target) }
        } catch {
            file.close()
            unlink(temporary)
            throw FileWriteError(path: given, .failed(step: step, errno: error))
        }
        // The rename is durable once the directory is.
        do {
            try synchronizeDirectory(directory)
        } catch {
            throw FileWriteError(path: given, .failed(step: "flush the directory \(directory) to disk", errno: error))
        }
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

/// How ``FileSystem/writeFile(_:to:mode:)`` wrote.
public enum FileWriteMethod: Sendable, Hashable {
    /// A file created or replaced whole by a rename: the path now names a regular file.
    case replacedAtomically
    /// Written into a character device or a named pipe, which stays as it was.
    case inPlace
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
