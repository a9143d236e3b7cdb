import HealthStore
import LinuxSystem

/// How a command reaches the store: the file it names, opening it (once per command, read-only
/// or for writing), and the store's errors as command errors with their exit statuses.
///
/// `query`, `delete`, `dead-letters` and the stored-workout commands (`workout list`, `show`,
/// `chart`, `export`) share it, so each finds the same file, refuses a missing one the same way
/// and fails with the same status.
enum StoreAccess {
    /// The options that choose the store, which every command that opens it takes: `--db`, and
    /// `--config` for the configuration whose `store.path` it is.
    static let options = [
        OptionSpec(name: "db", value: "PATH", help: "The store (default: the configuration's store.path, else the data directory's samples.sqlite)."),
        ConfigurationLocator.option,
    ]

    /// Opens the store ``path(_:context:)`` names with `access`. A command never creates a
    /// store: opening for writing would create a missing file, so a missing one is refused
    /// first, as the read-only open refuses it.
    /// - Throws: ``CommandError`` with status 66 when there is no store there; the store's other
    ///   errors as ``commandError(_:)`` maps them; the configuration's errors (78).
    static func open(
        _ arguments: ParsedArguments, context: CommandContext, access: HealthStore.Access = .readOnly
    ) async throws -> HealthStore {
        let path = try path(arguments, context: context)
        func missing() -> CommandError {
            CommandError(.noInput, "no store at \(path); run 'healthgate run' or 'healthgate demo' first, or pass --db PATH")
        }
        guard access == .readOnly || FileSystem.exists(path) else { throw missing() }
        do {
            return try await HealthStore.open(path: path, access: access)
        } catch {
            if error.code == .notFound { throw missing() }
            throw commandError(error)
        }
    }

    /// Opens the store as ``open(_:context:access:)`` does, runs `body` with it and closes it
    /// on every path, so a store opened for writing is checkpointed however `body` ends.
    static func withStore<T>(
        _ arguments: ParsedArguments, context: CommandContext, access: HealthStore.Access,
        _ body: (HealthStore) async throws -> T
    ) async throws -> T {
        let store = try await open(arguments, context: context, access: access)
        do {
            let result = try await body(store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
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
