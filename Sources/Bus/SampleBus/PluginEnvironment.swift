public import GatewayRuntime
public import FoundationEssentials
public import GatewayTime
public import HealthModel
public import HealthStore

/// The directories a gateway uses, resolved once by the executable (XDG base directories, or
/// the systemd `StateDirectory=`/`RuntimeDirectory=` variables when run as a service).
public struct GatewayPaths: Sendable, Hashable {
    /// Persistent data, as a path: the default SQLite store (`$XDG_DATA_HOME/healthgate`).
    public var dataPath: String
    /// Persistent state, as a path (`$XDG_STATE_HOME/healthgate` or `$STATE_DIRECTORY`).
    public var statePath: String
    /// Runtime files, as a path: the control socket (`$XDG_RUNTIME_DIR/healthgate` or
    /// `$RUNTIME_DIRECTORY`).
    public var runtimePath: String

    // The paths are kept as text, and a URL is made only when one is asked for: the gateway's
    // start-up joins paths and never parses a URL, so Foundation's URL code is not made resident
    // in every gateway (Benchmarks/README.md, "memory").

    /// Persistent data: the default SQLite store (`$XDG_DATA_HOME/healthgate`).
    public var dataDirectory: URL {
        get { URL(fileURLWithPath: dataPath) }
        set { dataPath = newValue.path }
    }
    /// Persistent state (`$XDG_STATE_HOME/healthgate` or `$STATE_DIRECTORY`).
    public var stateDirectory: URL {
        get { URL(fileURLWithPath: statePath) }
        set { statePath = newValue.path }
    }
    /// Runtime files: the control socket (`$XDG_RUNTIME_DIR/healthgate` or `$RUNTIME_DIRECTORY`).
    public var runtimeDirectory: URL {
        get { URL(fileURLWithPath: runtimePath) }
        set { runtimePath = newValue.path }
    }

    /// The directories as URLs.
    public init(dataDirectory: URL, stateDirectory: URL, runtimeDirectory: URL) {
        self.init(dataPath: dataDirectory.path, statePath: stateDirectory.path, runtimePath: runtimeDirectory.path)
    }

    /// The directories as absolute paths.
    public init(dataPath: String, statePath: String, runtimePath: String) {
        self.dataPath = dataPath
        self.statePath = statePath
        self.runtimePath = runtimePath
    }
}

/// Everything a plugin needs from the gateway, passed to its initializer: no plugin reaches
/// for globals.
public struct PluginEnvironment: Sendable {
    /// The instance name from the configuration (defaults to the kind).
    public var name: String
    public var logger: Logger
    public var clock: any GatewayClock
    public var ids: SampleIDGenerator
    public var paths: GatewayPaths
    /// The process environment, injected so tests can point plugins at private services
    /// (`DBUS_SYSTEM_BUS_ADDRESS`) and secrets can be named by variable.
    public var variables: [String: String]
    /// This gateway's name (the configuration's `gatewayName`, else the host name): what a fleet
    /// tells gateways apart by, in provenance and in a broker's topics.
    public var gatewayName: String
    /// What the configuration's `profile` says of the user (height, weight, date of birth, sex),
    /// for readings that depend on the person; empty when there is no profile.
    public var user: UserCharacteristics
    /// The configuration's participants with the devices they wear (run-time assignments
    /// stored before the start applied) and their profiles' figures, for readings that depend
    /// on who is measured (a shared scale); empty when there are none.
    public var participants: [ParticipantCharacteristics]
    /// The gateway's store, opened once by the executable (nil where a plugin is built without
    /// one: `config check`, tests of sources). The `sqlite` sink commits into it.
    public var store: HealthStore?
    /// Whether the wall clock can be believed (the kernel's synchronisation state in the
    /// executable): a plugin never writes the gateway's time into a device while it cannot.
    public var clockTrust: any ClockTrust

    /// `clockTrust` defaults to a trusted clock, for tools and tests that write no device; the
    /// executable passes the kernel's.
    public init(
        name: String, logger: Logger, clock: any GatewayClock, ids: SampleIDGenerator,
        paths: GatewayPaths, variables: [String: String], gatewayName: String = "healthgate",
        user: UserCharacteristics = UserCharacteristics(), participants: [ParticipantCharacteristics] = [],
        store: HealthStore? = nil, clockTrust: any ClockTrust = FixedClockTrust(.declaredTrusted)
    ) {
        self.participants = participants
        self.clockTrust = clockTrust
        self.store = store
        self.user = user
        self.gatewayName = gatewayName
        self.name = name
        self.logger = logger
        self.clock = clock
        self.ids = ids
        self.paths = paths
        self.variables = variables
    }
}

/// What a running source gets: where to publish, and how to report.
public struct SourceContext: Sendable {
    public var publisher: SamplePublisher
    public var logger: Logger
    public var clock: any GatewayClock
    public var status: StatusReporter
    /// Where the source reads its checkpoints back (at start, or when a device appears): by
    /// default the bus's ledger, backed by the sink that stores checkpoints. See
    /// ``SourceCheckpoint`` and the durability section of docs/architecture.md.
    public var checkpoints: any SourceCheckpointReader

    public init(publisher: SamplePublisher, logger: Logger, clock: any GatewayClock, status: StatusReporter) {
        self.publisher = publisher
        self.logger = logger
        self.clock = clock
        self.status = status
        self.checkpoints = publisher.bus.checkpoints
    }
}

/// What a running sink gets.
public struct SinkContext: Sendable {
    public var logger: Logger
    public var clock: any GatewayClock
    public var status: StatusReporter
    /// The gateway's stop request. A sink keeps draining during a graceful stop, but its backoff
    /// and retry waits must end when the stop is requested: sleep with
    /// ``StopRequest/sleep(for:on:)`` instead of `clock.sleep`.
    public var stopRequest: StopRequest

    public init(logger: Logger, clock: any GatewayClock, status: StatusReporter, stopRequest: StopRequest = .never) {
        self.logger = logger
        self.clock = clock
        self.status = status
        self.stopRequest = stopRequest
    }
}

/// What the gateway hands a ``StoreFollower`` when it runs.
public struct FollowerContext: Sendable {
    public var logger: Logger
    public var clock: any GatewayClock
    public var status: StatusReporter
    /// The gateway's stop request: once it is requested, the follower stops waiting on backoffs.
    public var stopRequest: StopRequest
    /// True once a stop was requested and every sink drained into the store: nothing more will
    /// be committed, so a follower that sent everything up to the store's latest anchor is done.
    public var storeSettled: @Sendable () -> Bool

    public init(
        logger: Logger, clock: any GatewayClock, status: StatusReporter, stopRequest: StopRequest = .never,
        storeSettled: @escaping @Sendable () -> Bool = { false }
    ) {
        self.logger = logger
        self.clock = clock
        self.status = status
        self.stopRequest = stopRequest
        self.storeSettled = storeSettled
    }
}
