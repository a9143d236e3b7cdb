#if canImport(Glibc)
import Glibc
#endif

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
