import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What a log line or a message says of an error from Foundation or the system.
public enum ErrorText {
    /// The system's text for the error a file operation failed with, and the file, for a
    /// `CocoaError` from FileManager or Data ("/var/lib/x: Permission denied"); for a
    /// `POSIXError`, its text; for anything else, its own description.
    public static func of(_ error: any Error) -> String {
        if let error = error as? CocoaError {
            let reason: String
            if let posix = error.underlying as? POSIXError {
                reason = String(cString: strerror(posix.code.rawValue))
            } else {
                reason = "error \(error.code.rawValue)"
            }
            return error.filePath.map { "\($0): \(reason)" } ?? reason
        }
        if let error = error as? POSIXError {
            return String(cString: strerror(error.code.rawValue))
        }
        return String(describing: error)
    }
}
