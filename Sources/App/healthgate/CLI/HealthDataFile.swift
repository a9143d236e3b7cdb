import LinuxSystem

/// Writes the files a command makes of health data (`workout chart`'s SVG, `workout export`'s
/// FIT and TCX): readable by the user alone, 0600, as docs/installing-and-operating.md asks of
/// every file that holds health data.
enum HealthDataFile {
    /// Writes `bytes` to `path` with ``FileSystem/writeFile(_:to:mode:)``: a file atomically
    /// with mode 0600 (also when it replaces one with a wider mode), a device or a named pipe
    /// (`/dev/stdout`) in place, leaving the node as it was.
    /// - Returns: how it wrote.
    /// - Throws: ``CommandError`` with ``ExitCode/cannotCreate`` (73) naming the path and the reason.
    @discardableResult
    static func write(_ bytes: [UInt8], to path: String) throws(CommandError) -> FileWriteMethod {
        do {
            return try FileSystem.writeFile(bytes, to: path, mode: 0o600)
        } catch {
            throw CommandError(.cannotCreate, "cannot write \(error)")
        }
    }
}
