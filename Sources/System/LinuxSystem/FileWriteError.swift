/// Why ``FileSystem/writeFile(_:to:mode:)`` wrote nothing, or not all of it: the path it was
/// given and what was wrong with it, or the step that failed and its error number.
///
/// A struct with a nested code, so that new reasons can be added without breaking users.
public struct FileWriteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Code: Hashable, Sendable {
        /// The path is a directory: there is no file to write.
        case isDirectory
        /// The path is a kind of file whose bytes are not a file's content, which writing could
        /// only harm or cannot reach: `a block device` (a disk), `a socket`.
        case notWritable(kind: String)
        /// A step failed: `step` says which, in words (`create a temporary file in /srv`,
        /// `write`, `rename the temporary file over it`), `errno` why.
        case failed(step: String, errno: Errno)
    }

    /// The path the caller gave.
    public var path: String
    /// What was wrong.
    public var code: Code

    /// Creates an error.
    public init(path: String, _ code: Code) {
        self.path = path
        self.code = code
    }

    /// `PATH: reason`, e.g. `/srv/out: is a directory; give the path of a file to write`.
    public var description: String {
        switch code {
        case .isDirectory: "\(path): is a directory; give the path of a file to write"
        case .notWritable(let kind): "\(path): is \(kind); give a file, a character device (/dev/stdout) or a named pipe"
        case .failed(let step, let errno): "\(path): cannot \(step): \(errno.text)"
        }
    }
}
