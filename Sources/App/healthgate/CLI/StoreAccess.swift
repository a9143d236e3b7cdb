import HealthStore

/// How a command reaches the store: the file it names, opening it read-only, and the store's
/// errors as command errors with their exit statuses.
///
/// `query`, `delete`, `dead-letters` and the stored-workout commands (`workout list`, `show`,
/// `chart`, `export`) share it, so each finds the same file and fails with the same status.
enum StoreAccess {
    /// The options that choose the store, which every command that opens it takes: `--db`, and
    /// `--config` for the configuration whose `store.path` it is.
    static let options = [
        OptionSpec(name: "db", value: "PATH", help: "The store (default: the configuration's store.path, else the data directory's samples.sqlite)."),
        ConfigurationLocator.option,
    ]

    /// Opens the store read-only: `--db PATH`, else the `store.path` of the configuration
    /// (`--config`, else the one `healthgate run` would load), else the data directory's `samples.sqlite`.
    /// - Throws: ``CommandError`` with status 66 when there is no store there; the store's other
    ///   errors as ``commandError(_:)`` maps them; the configuration's errors (78).
    static func openReadOnly(_ arguments: ParsedArguments, context: CommandContext) async throws -> HealthStore {
        let path = try path(arguments, context: context)
        do {
            return try await HealthStore.open(path: path, access: .readOnly)
        } catch {
            if error.code == .notFound {
                throw CommandError(
                    .noInput, "no store at \(path); run 'healthgate run' or 'healthgate demo' first, or pass --db PATH")
            }
            throw commandError(error)
        }
    }

    /// The store a command works on: `--db PATH`, else the `store.path` of the configuration
    /// (`--config FILE`, else the one `healthgate run` would load), else the data directory's
    /// `samples.sqlite`.
    /// - Throws: the configuration's errors (78), when it is read and wrong.
    static func path(_ arguments: ParsedArguments, context: CommandContext) throws -> String {
        if let path = arguments.value("db") { return path }
        let configuration = try ConfigurationLocator.load(arguments, context: context)
        return try StoreConfiguration.settings(of: configuration, paths: context.paths).path
    }

    /// Runs `body`, one or more calls to the store, and maps its error with ``commandError(_:)``.
    static func call<T>(_ body: () async throws(StoreError) -> T) async throws(CommandError) -> T {
        do {
            return try await body()
        } catch {
            throw commandError(error)
        }
    }

    /// A store error as the command error a user sees: its description, and the exit status
    /// of its kind (66 no store, 65 bad data or anchor, 75 in use, 64 bad argument, 74 I/O).
    static func commandError(_ error: StoreError) -> CommandError {
        let status: ExitCode = switch error.code {
        case .notFound: .noInput
        case .notAStore, .schemaTooNew, .schemaTooOld, .corrupt, .invalidData, .anchorExpired, .unknownAnchor: .dataError
        case .inUse: .temporaryFailure
        case .invalidArgument: .usage
        case .ioError, .busy, .diskFull, .readOnly: .ioError
        default: .software
        }
        return CommandError(status, error.description)
    }
}
