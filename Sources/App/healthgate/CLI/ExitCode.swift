/// Exit statuses, from sysexits(3).
enum ExitCode: Int32 {
    case success = 0
    case failure = 1
    /// EX_USAGE: the command was used incorrectly.
    case usage = 64
    /// EX_DATAERR: the input data was incorrect (a bad payload, an invalid unit).
    case dataError = 65
    /// EX_NOINPUT: an input file did not exist or was not readable.
    case noInput = 66
    /// EX_UNAVAILABLE: a service is unavailable (no daemon on the control socket, no Bluetooth).
    case unavailable = 69
    /// EX_SOFTWARE: an internal error.
    case software = 70
    /// EX_CANTCREAT: an output file cannot be created.
    case cannotCreate = 73
    /// EX_IOERR: an I/O error.
    case ioError = 74
    /// EX_TEMPFAIL: try again later (a running workout holds the samples to delete).
    case temporaryFailure = 75
    /// EX_CONFIG: a configuration error.
    case configuration = 78
}

/// A failure that ends a command with a message on stderr and an exit status.
struct CommandError: Error, CustomStringConvertible {
    var exitCode: ExitCode
    var message: String

    init(_ exitCode: ExitCode, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    var description: String { message }
}
