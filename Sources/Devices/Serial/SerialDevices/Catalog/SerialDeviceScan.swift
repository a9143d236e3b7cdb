import FoundationEssentials
public import GatewayRuntime

/// A serial member's `healthgate scan --kind NAME`: listen through its device for a while and
/// list what it heard, with the `sources` entry that reads it. The executable finds these among
/// the catalog's serial members (``SerialDeviceFamilySource/scan``), so it imports no member.
public struct SerialDeviceScan: Sendable {
    /// The `--kind` that selects it: `ant`.
    public let name: String
    /// What is listed, for the help: `ANT+ heart-rate straps heard through a USB ANT stick`.
    public let summary: String
    /// Listens and reports. Throws the member's errors: a configuration problem (a missing
    /// key file) as `PluginConfigurationError`, an unusable device as its error.
    public let run: @Sendable (SerialDeviceScanRequest) async throws -> SerialDeviceScanResult

    public init(name: String, summary: String, run: @escaping @Sendable (SerialDeviceScanRequest) async throws -> SerialDeviceScanResult) {
        self.name = name
        self.summary = summary
        self.run = run
    }
}

/// What `scan` asks a serial member for.
public struct SerialDeviceScanRequest: Sendable {
    /// The device to listen through (`--path`); nil: every device udev tags for the member.
    public var path: String?
    /// How long to listen.
    public var duration: Duration
    /// The process environment (where the configuration directory is).
    public var variables: [String: String]
    public var clock: any GatewayClock
    public var logger: Logger

    public init(path: String?, duration: Duration, variables: [String: String], clock: any GatewayClock, logger: Logger) {
        self.path = path
        self.duration = duration
        self.variables = variables
        self.clock = clock
        self.logger = logger
    }
}

/// What a serial member heard: a table, and the `sources` entries that read it.
public struct SerialDeviceScanResult: Sendable {
    /// The table's column names.
    public var header: [String]
    /// One row per device heard.
    public var rows: [[String]]
    /// The `sources` entries that read what was heard (`{"kind": …, "config": {…}}`), which
    /// `config check` accepts.
    public var sources: [JSONValue]

    public init(header: [String], rows: [[String]], sources: [JSONValue]) {
        self.header = header
        self.rows = rows
        self.sources = sources
    }
}
