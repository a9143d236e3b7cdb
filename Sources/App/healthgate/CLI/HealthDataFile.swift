import FoundationEssentials
import GatewayRuntime
import LinuxSystem

/// Writes the files a command makes of health data (`workout chart`'s SVG, `workout export`'s
/// FIT and TCX): readable by the user alone, 0600, as docs/installing-and-operating.md asks of
/// every file that holds health data.
enum HealthDataFile {
    /// Writes `bytes` to `path` atomically (a temporary file renamed over it) with mode 0600,
    /// also when it replaces a file with a wider mode.
    /// - Throws: ``CommandError`` with ``ExitCode/cannotCreate`` (73) naming the path and the reason.
    static func write(_ bytes: [UInt8], to path: String) throws(CommandError) {
        // The process's mask, so that the temporary file is never readable by others, not even
        // before the chmod below; this process writes nothing else that others must read.
        ProcessControl.restrictFileCreationMask(0o077)
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
            // The mask applies to files created; a rename may keep the mode of the file replaced.
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        } catch {
            throw CommandError(.cannotCreate, "cannot write \(path): \(ErrorText.of(error))")
        }
    }
}
