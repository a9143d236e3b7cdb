import BLETransport
import BuiltinPlugins
import FoundationEssentials
import GatewayControl
import GatewayRuntime
import GatewayTime
import HealthModel
import HealthStore
import LinuxSystem
import SampleBus
import WorkoutRuntime
import Workouts
/// Builds a gateway from a configuration and runs it until it is stopped: the daemon behind
/// `healthgate run` and `healthgate demo`.
///
/// Order of start-up: the configuration is checked (a bad config fails here, before anything
/// runs), then the directories and the logger, then the parts are made (``assemble(_:stop:duration:)``:
/// the store, the plugins from the catalog, the bus…), then signal handling, then the parts are
/// started in the order that function declares (``GatewayParts``), then the bus with every part's
/// work beside it (sinks subscribe before sources start). Shutdown: SIGINT, SIGTERM, SIGHUP or `--duration`
/// request a graceful stop (exit 0 once every sink drained), after which the parts stop in
/// reverse; a second signal or the configured timeout forces it (exit 1 within
/// ``ForcedExit/grace``, see ``ForcedExit``).
struct GatewayRunner {
    var context: CommandContext
    /// The catalog the plugins are built from, given the run's Bluetooth adapters.
    var catalog: @Sendable (BluetoothAdapters?) -> PluginCatalog = { BuiltinCatalog.make(bluetooth: $0) }

    /// Sinks the executable adds beside the configured ones (the demo's console sink).
    var extraSinks: [ConfiguredSink] = []
    /// Work that runs beside the gateway and is cancelled after it (device simulators).
    var background: [@Sendable () async throws -> Void] = []
    /// Runs once the gateway's services exist, before it starts (the demo starts its group
    /// workout here).
    var onStart: (@Sendable (ParticipantWorkouts) async -> Void)?
    /// Runs once a graceful stop is requested (a signal, `--duration`), before the sources stop,
    /// for at most `shutdownTimeoutSeconds` (the demo ends its group workout here, so that the
    /// ended workouts still reach the store). A second signal during it forces the stop.
    var onStop: (@Sendable (ParticipantWorkouts) async -> Void)?
    /// Configured sources (by name) that stop after this long: the demo's dropped sensor.
    var silencedSources: [String: Duration] = [:]

    /// What every part of one run is made from, each made once: the configuration as checked,
    /// with the embedded default sink, and the run's logger, clock and directories.
    struct RunFacts: Sendable {
        let configuration: GatewayConfiguration
        /// Whether the file names remote sinks and no `sqlite` sink, read before the default
        /// sink is added (``ConfigurationLocator/isJournalOnly(_:)``).
        let journalOnly: Bool
        let store: StoreConfiguration.Settings
        let profile: UserProfile
        let bluetooth: BluetoothConfiguration
        let logger: Logger
        let clock: any GatewayClock
        let paths: GatewayPaths
        let variables: [String: String]
        let ids: SampleIDGenerator
        /// Whether the wall clock may be written into devices: the kernel's word, or the
        /// configuration's.
        let clockTrust: any ClockTrust
        let gatewayName: String
        /// `shutdownTimeoutSeconds`: how long a graceful stop, and the work before it, may take.
        let shutdownTimeout: Duration
    }

    /// Runs the gateway `configuration` describes until it is stopped, or for `duration`
    /// seconds.
    /// - Returns: success when every sink drained, failure when the stop was forced or a sink
    ///   was given up.
    /// - Throws: ``ConfigurationError`` or ``CommandError`` when the configuration is wrong or a
    ///   part cannot be made or started (the parts started before it are stopped first).
    func run(configuration: GatewayConfiguration, duration: Double?) async throws -> ExitCode {
        let facts = try prepare(configuration)
        let stop = GatewayStop(workBeforeStopping: onStop != nil)
        let gateway = try await assemble(facts, stop: stop, duration: duration)
        let control = gateway.control, runMark = gateway.runMark
        // Armed before the first part starts: once the control socket answers, a SIGTERM must be
        // a graceful stop (carried out as soon as the bus runs), never the default action.
        let armed = stop.arm(
            deadline: facts.shutdownTimeout, notifications: gateway.notifications,
            cleanup: {
                control.removeSocketFile()
                // A forced exit is a stop, not a crash.
                runMark.end()
            }, logger: facts.logger)
        do {
            try await gateway.parts.start()
        } catch {
            armed.disarm()
            throw error
        }
        // The configured ones only: the workouts' built-in source and sink and the executable's
        // own (the demo's console) are not in the file the line names.
        let plugins = gateway.plugins
        let counted = "\(String(count: plugins.sources.count, "source")) and "
            + "\(String(count: plugins.sinks.count + plugins.followers.count, "sink"))"
        let origin = facts.configuration.origin
        // The version in the run's first line: a crash's backtrace, which the Swift runtime prints
        // to the same journal, is then read against the build it came from.
        facts.logger.info("started with \(counted) from \(origin) (healthgate \(HealthgateCLI.version))")
        let readiness = "running: \(counted) from \(origin), store \(gateway.store.path)"
        let notifications = gateway.notifications
        let outcome = await gateway.parts.run {
            await gateway.bus.runReportingOutcome(shutdown: stop.shutdown) { notifications.ready(readiness) }
        }
        // A forced stop exits within ForcedExit's grace whatever still waits here: the store's
        // close is a transaction (the open series closed), which waits for the lock that stuck
        // the stop. Its series stay open and are closed at the next start.
        if outcome != .forced { armed.cancelForcedExit() }
        await gateway.parts.stop()
        facts.logger.info(Self.stoppedLine(plugins: plugins, statusBoard: gateway.statusBoard))
        armed.disarm()
        return outcome == .drained ? .success : .failure
    }

    /// Checks `given` with the checks of `healthgate config check`, before anything is created
    /// or started; then restricts the mode of the files the run creates and makes its
    /// directories.
    /// - Throws: ``ConfigurationError`` for a wrong configuration, ``CommandError`` when a
    ///   directory cannot be made.
    func prepare(_ given: GatewayConfiguration) throws -> RunFacts {
        let paths = context.paths
        let configuration = ConfigurationLocator.withDefaults(given)
        let validated = try ConfigurationValidation.validate(
            configuration, catalog: catalog(nil), context: context,
            logger: Logger(label: "healthgate", sink: StandardErrorLogSink(context: context), level: .warning))
        if !Self.isSystemdService(context.variables) {
            // Health data is for the user alone: every file the daemon and its plugins create
            // (stores, outboxes, state) is 0600 and every directory 0700. Under systemd the
            // unit's UMask= and StateDirectoryMode= decide instead.
            ProcessControl.restrictFileCreationMask(0o077)
        }
        // With system calls rather than FileManager, whose code would stay resident in the
        // gateway for this one call (Benchmarks/README.md, "memory").
        for directory in [paths.dataPath, paths.statePath] {
            do {
                try FileSystem.makeDirectories(directory, mode: 0o700)
            } catch {
                throw CommandError(.cannotCreate, "cannot create \(directory): \(error)")
            }
        }
        return RunFacts(
            configuration: configuration, journalOnly: ConfigurationLocator.isJournalOnly(given),
            store: validated.store, profile: validated.profile, bluetooth: validated.bluetooth,
            logger: Logger(label: "healthgate", sink: StandardErrorLogSink(context: context), level: given.logLevel),
            clock: context.clock, paths: paths, variables: context.variables, ids: SampleIDGenerator(),
            clockTrust: KernelClockTrust.of(configuration.clock), gatewayName: Self.gatewayName(of: configuration),
            shutdownTimeout: .milliseconds(Int64(configuration.shutdownTimeoutSeconds * 1000)))
    }

    /// The line logged once the gateway stopped: the records each configured plugin published
    /// or wrote, as the start line counts them (not the workouts' built-in ones).
    static func stoppedLine(plugins: BuiltPlugins, statusBoard: StatusBoard) -> String {
        let configured = Set(plugins.sources.map(\.name) + plugins.sinks.map(\.name) + plugins.followers.map(\.name))
        let statuses = statusBoard.snapshot().filter { configured.contains($0.name) }
        func counts(_ role: PluginRole) -> String {
            let text = statuses.filter { $0.role == role }.map { "\($0.name) \($0.records)" }.joined(separator: ", ")
            return text.isEmpty ? "none" : text
        }
        return "stopped (records published: \(counts(.source)); records written: \(counts(.sink)))"
    }

    /// The configuration's `gatewayName`, else the host name.
    static func gatewayName(of configuration: GatewayConfiguration) -> String {
        configuration.gatewayName ?? ProcessControl.hostName() ?? "healthgate"
    }

    /// Whether systemd runs the daemon as a service with its own directories (then the unit
    /// sets the file mode mask and the directories' modes).
    static func isSystemdService(_ variables: [String: String]) -> Bool {
        !(variables["STATE_DIRECTORY"] ?? "").isEmpty || !(variables["RUNTIME_DIRECTORY"] ?? "").isEmpty
    }
}
