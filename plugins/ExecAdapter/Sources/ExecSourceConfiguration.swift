public import GatewayRuntime
public import AdapterHost
import HealthgateAdapter
public import SampleBus
import LinuxSystem

/// The `config` object of an `exec` source (plugins/ExecAdapter/README.md, sample-config.json):
/// the adapter's command and how it runs. Each key is declared once, in ``configurationKeys``.
public struct ExecSourceConfiguration: Sendable, Hashable, PluginConfigurationContract, DeclaredConfiguration {
    /// The program and its arguments; a bare program name is looked up in the adapter's `PATH`.
    public var command: [String] = []
    /// `NAME=value` entries added to the adapter's environment.
    public var environment: [String] = []
    /// The directory it runs in; nil: the gateway's state directory.
    public var directory: String?
    /// The user it runs as (only when the gateway runs as root); nil: the gateway's.
    public var user: String?
    /// The adapter's own block, handed to it in the hello.
    public var adapter: JSONValue = .object([:])
    public var maxLineBytes = AdapterProtocol.defaultMaxLineBytes
    public var helloTimeoutSeconds = 10.0
    public var stopTimeoutSeconds = 3.0

    public init() {}

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required(
                "command", \.command, .array(.string(minLength: 1), minItems: 1, maxItems: 256),
                "The adapter's program and its arguments, e.g. [\"python3\", \"/opt/cuff/cuff_csv.py\"]; a bare name is looked up in PATH"),
            ConfigurationKey(
                "environment", \.environment, .array(.string(pattern: "^[A-Za-z_][A-Za-z0-9_]*=")),
                "NAME=value entries added to the adapter's environment (it gets PATH, LANG, LC_ALL, TZ, HOME and TMPDIR from the gateway's, nothing else)"),
            ConfigurationKey("directory", \.directory, .string(minLength: 1), "The directory the adapter runs in; absent: the gateway's state directory"),
            ConfigurationKey(
                "user", \.user, .string(minLength: 1),
                "The user the adapter runs as (a name or uid), when the gateway runs as root; absent: the gateway's user"),
            ConfigurationKey("adapter", \.adapter, .delegated, "The adapter's own configuration, handed to it in the hello as config"),
            ConfigurationKey(
                "maxLineBytes", \.maxLineBytes, .whole(1024...16_777_216, unit: "bytes"),
                "The longest line read from the adapter; a longer one is skipped with an error"),
            ConfigurationKey(
                "helloTimeoutSeconds", \.helloTimeoutSeconds, .number(0.1...600, unit: "seconds"),
                "How long the adapter has to answer the gateway's hello"),
            ConfigurationKey(
                "stopTimeoutSeconds", \.stopTimeoutSeconds, .number(0.1...60, unit: "seconds"),
                "How long the adapter has to exit after stop before SIGTERM (and SIGKILL 2 s later); keep it under the gateway's shutdownTimeoutSeconds"),
        ]
    }

    /// Checks every key and resolves the program: it must exist and be executable, the user
    /// must exist (and the gateway be root to become it), the directory must exist. No side effects.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> AdapterSettings {
        guard let program = command.first else { throw PluginConfigurationError(keyPath: "command", reason: "the command is empty") }
        var variables = AdapterSettings.inherited(from: environment.variables)
        if variables["PATH"] == nil { variables["PATH"] = "/usr/local/bin:/usr/bin:/bin" }
        for (index, entry) in self.environment.enumerated() {
            guard let equals = entry.firstIndex(of: "=") else {
                throw PluginConfigurationError(keyPath: "environment[\(index)]", reason: "expected NAME=value")
            }
            variables[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        guard let executable = ChildProcess.resolve(program, path: variables["PATH"] ?? "") else {
            throw PluginConfigurationError(
                keyPath: "command[0]",
                reason: program.contains("/")
                    ? "\(program) does not exist or is not executable"
                    : "\(program) does not exist in the adapter's PATH (\(variables["PATH"] ?? "")) or is not executable")
        }
        var account: ChildProcess.User?
        if let user {
            do {
                account = try ChildProcess.User.named(user)
            } catch {
                throw PluginConfigurationError(keyPath: "user", reason: "the user \(user) does not exist on this system")
            }
            guard ChildProcess.currentUserID == 0 || account?.uid == ChildProcess.currentUserID else {
                throw PluginConfigurationError(keyPath: "user", reason: "the gateway runs as uid \(ChildProcess.currentUserID), not root: it cannot start the adapter as \(user)")
            }
        }
        let directory = self.directory ?? environment.paths.statePath
        if let given = self.directory, !FileSystem.isDirectory(given) {
            throw PluginConfigurationError(keyPath: "directory", reason: "\(given) does not exist or is not a directory")
        }
        return AdapterSettings(
            executable: executable, arguments: command, environment: variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" },
            directory: directory, user: account, adapterConfiguration: adapter, maxLineBytes: maxLineBytes,
            helloTimeout: .milliseconds(Int64(helloTimeoutSeconds * 1000)), stopTimeout: .milliseconds(Int64(stopTimeoutSeconds * 1000)))
    }
}
