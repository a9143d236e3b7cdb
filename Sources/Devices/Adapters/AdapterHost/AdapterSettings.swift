public import GatewayRuntime
public import HealthgateAdapter
public import LinuxSystem

/// How an adapter runs: the `exec` source's configuration checked, the program resolved
/// (plugins/ExecAdapter's `ExecSourceConfiguration` makes them), or `healthgate adapter check`'s.
public struct AdapterSettings: Sendable, Hashable {
    /// The program's path.
    public var executable: String
    /// argv, argv[0] included.
    public var arguments: [String]
    /// `NAME=value` entries.
    public var environment: [String]
    public var directory: String
    public var user: ChildProcess.User?
    public var adapterConfiguration: JSONValue
    public var maxLineBytes: Int
    public var helloTimeout: Duration
    public var stopTimeout: Duration

    /// The variables an adapter gets from the gateway's environment, when set there: what a
    /// program needs to run and nothing the gateway's own secrets could be in.
    public static let inheritedVariables = ["PATH", "LANG", "LC_ALL", "TZ", "HOME", "TMPDIR"]

    /// The `NAME=value` entries of `variables` an adapter inherits (``inheritedVariables``).
    public static func inherited(from variables: [String: String]) -> [String: String] {
        variables.filter { inheritedVariables.contains($0.key) }
    }

    public init(
        executable: String, arguments: [String], environment: [String], directory: String, user: ChildProcess.User? = nil,
        adapterConfiguration: JSONValue = .object([:]), maxLineBytes: Int = AdapterProtocol.defaultMaxLineBytes,
        helloTimeout: Duration = .seconds(10), stopTimeout: Duration = .seconds(3)
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.directory = directory
        self.user = user
        self.adapterConfiguration = adapterConfiguration
        self.maxLineBytes = maxLineBytes
        self.helloTimeout = helloTimeout
        self.stopTimeout = stopTimeout
    }
}
