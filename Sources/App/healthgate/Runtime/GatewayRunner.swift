import BuiltinPlugins
import AsyncPrimitives
import BLEProfileKit
import BlueZ
import BLETransport
import FoundationEssentials
import GatewayControl
import GatewayTime
import LinuxSystem
import Metrics
import HealthModel
import HealthStore
import GatewayRuntime
import SampleBus
import WebBoard
import Synchronization
import Workouts
import WorkoutRuntime
import WorkoutPresentation
#if canImport(Glibc)
import Glibc
#endif

/// Builds a gateway from a configuration and runs it until it is stopped: the daemon behind
/// `healthgate run` and `healthgate demo`.
///
/// Order of start-up: directories, logger, plugins from the catalog (a bad config fails here,
/// before anything runs), the control socket, signal handling, then the gateway itself (sinks
/// subscribe before sources start). Shutdown: SIGINT, SIGTERM, SIGHUP or `--duration` request a
/// graceful stop (exit 0 once every sink drained); a second signal or the configured timeout
/// forces it (exit 1 within ``ForcedExit/grace``, see ``ForcedExit``).
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

    func run(configuration: GatewayConfiguration, duration: Double?) async throws -> ExitCode {
        let paths = context.paths
        // The checks of `healthgate config check`, before anything is created or started.
        let validated = try ConfigurationValidation.validate(
            ConfigurationLocator.withDefaults(configuration), catalog: catalog(nil), context: context,
            logger: Logger(label: "healthgate", sink: StandardErrorLogSink(context: context), level: .warning))
        let storeSettings = validated.store
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
        let logger = Logger(
            label: "healthgate", sink: StandardErrorLogSink(context: context),
            level: configuration.logLevel)
        let clock = context.clock
        let ids = SampleIDGenerator()
        let journalOnly = ConfigurationLocator.isJournalOnly(configuration)
        let configuration = ConfigurationLocator.withDefaults(configuration)
        let variables = context.variables
        // The store first: it is the gateway's commit point, opened once and handed to every
        // part that reads or writes it.
        let store = try await Self.openStore(storeSettings, origin: configuration.origin, uptime: { clock.uptime() })
        logger.info("store: \(store.path)")
        // Plugins open files and libraries as they are made (an outbox, libcurl): off the pool.
        let gatewayName = Self.gatewayName(of: configuration)
        // The adapters through BlueZ, one scheduler each with the gateway's limits, for every
        // Bluetooth source: the catalog hands them to those sources.
        let bluetooth = BluetoothAdapters.bluez(
            limits: validated.bluetooth.adapterLimits, clock: clock, logger: logger, variables: variables,
            adapters: validated.bluetooth.adapters)
        let catalog = catalog(bluetooth)
        // Whether the wall clock may be written into devices: the kernel's word, or the configuration's.
        let clockTrust = KernelClockTrust.of(configuration.clock)
        // Checked with the rest of the configuration before (an invalid profile stops the run).
        let profile = (try? UserProfile.decode(configuration.profile)) ?? UserProfile()
        let user = profile.characteristics
        let built = try await QueueExecutor(label: "healthgate.plugins").run {
            // Read on this queue: the stored assignments are a blocking read of the store.
            let participants = Self.participants(of: configuration, profile: profile, store: store, logger: logger)
            return try catalog.instantiate(configuration) { name in
                PluginEnvironment(
                    name: name, logger: logger.child(name), clock: clock, ids: ids, paths: paths,
                    variables: variables, gatewayName: gatewayName, user: user, participants: participants,
                    store: store, clockTrust: clockTrust)
            }
        }
        var sources = built.sources
        let sinks = built.sinks
        let followers = built.followers
        try await Self.prepareFollowers(followers, journalOnly: journalOnly, store: store, logger: logger)
        for index in sources.indices {
            guard let after = silencedSources[sources[index].name] else { continue }
            sources[index].source = SilencedSource(
                source: sources[index].source, after: after, clock: clock, logger: logger.child(sources[index].name))
        }
        let services = try GatewayServices(
            configuration: configuration, store: store, paths: paths, logger: logger, clock: clock, ids: ids,
            clockBase: { clockTrust.clockBase() })
        // Before the control socket answers, so no command sees the demo's class half started.
        if let onStart { await onStart(services.workouts) }
        var boardSinks: [ConfiguredSink] = []
        var background = background
        let correction = ClockStepCorrection(store: store, workouts: services.workouts, logger: logger, clock: clock)
        background.append {
            try await ClockWatch(trust: clockTrust, clock: clock, logger: logger) { base, previous in await correction(onto: base, from: previous) }.run()
        }
        // Retention, the background migration of an upgraded store and the closing of idle
        // quantity series: child tasks beside ingest, each holding the writer for a batch at most.
        background.append {
            try await StoreMaintenance(
                store: store, tombstoneRetention: storeSettings.tombstoneRetention, sampleRetention: storeSettings.sampleRetention,
                keepWorkoutSamples: storeSettings.keepWorkoutSamples, clock: clock, logger: logger)
                .run()
        }
        // What `GET /metrics` reads: the status board, each sink queue's depth (once the gateway
        // below exists), the store's followers, the clock.
        let statusBoard = StatusBoard()
        let runningGateway = Mutex<Gateway?>(nil)
        let arbiter = HeartRateArbiter(clock: clock, group: Self.wearer(in: services.workouts))
        // systemd's Type=notify protocol: ready, the watchdog's pings, stopping.
        let notifications = ServiceNotifications(variables: variables, clock: clock, logger: logger.child("systemd"))
        let metrics = GatewayMetrics(
            statusBoard: statusBoard, store: store, clockTrust: clockTrust, clock: clock,
            queueDepths: { runningGateway.withLock { $0?.queueDepths() ?? [] } }, heartRateArbiter: arbiter,
            watchdog: { notifications.report })
        var servers: [BoardServer] = []
        if let listen = try WebBoardConfiguration.decode(configuration.metrics, origin: configuration.origin, key: "metrics") {
            let server = BoardServer(
                metricsOnly: listen, token: try listen.token(origin: configuration.origin, key: "metrics"), metrics: metrics,
                logger: logger.child("metrics"))
            do {
                try server.start()
            } catch {
                throw CommandError(.unavailable, "metrics.listen: \(error)")
            }
            servers.append(server)
        }
        if let web = try WebBoardConfiguration.decode(configuration.web, origin: configuration.origin) {
            let board = LiveBoard(workouts: services.workouts, clock: clock)
            // The board needs only the latest readings: when it falls behind, the oldest go.
            boardSinks.append(ConfiguredSink(
                name: "board", kind: "board", queue: QueueConfiguration(capacity: 1000, policy: .dropOldest), sink: board))
            let server = BoardServer(
                configuration: web, token: try web.token(origin: configuration.origin), board: board,
                history: StoredWorkoutHistory(store: store), metrics: metrics,
                logger: logger.child("web"))
            do {
                try server.start()
            } catch {
                throw CommandError(.unavailable, "web.listen: \(error)")
            }
            servers.append(server)
            // On every reading, coalesced (BoardUpdate.coalescingMilliseconds): a sample reaches the page within the bus's
            // latency plus that window; only the changed tiles are sent (BoardUpdate).
            background.append { try await server.publishChanges(from: board, clock: clock) }
        }
        let gateway = Gateway(
            sources: sources + services.sources,
            sinks: sinks + extraSinks + services.sinks + boardSinks, followers: followers, clock: clock, logger: logger,
            statusBoard: statusBoard,
            shutdownTimeout: .milliseconds(Int64(configuration.shutdownTimeoutSeconds * 1000)),
            provenance: Self.provenance(of: configuration, gatewayName: gatewayName, variables: variables),
            clockBase: { clockTrust.clockBase() },
            heartRateArbiter: arbiter)
        runningGateway.withLock { $0 = gateway }
        background.append {
            try await notifications.runWatchdog {
                PipelineWatchdog.Observation(writer: store.writerActivity, queues: gateway.queueHeads())
            }
        }


        let socketPath = configuration.controlSocket
            ?? FileSystem.join(paths.runtimePath, "control.sock")
        let started = clock.now()
        // Set once this run is marked, after the control socket proved no other daemon serves
        // this configuration; read by every `status`.
        let previousRun = AsyncCondition<StatusReport.PreviousRun?>(nil)
        var handlers = services.controlHandlers
        handlers["status"] = { _ in
            // status answers while the store's disk hangs (the watchdog's case): the migration's
            // steps are left out when the store does not answer within a second.
            let migration = try? await raceAbandoning(sleep: { try await clock.sleep(for: .seconds(1)) }) {
                try await store.migrationSteps()
            }
            let steps: [StoreMigrationStep]? = if case .event(let steps)? = migration { steps } else { nil }
            return try JSONValue.encoding(StatusReport(
                version: HealthgateCLI.version, pid: Int(getpid()), startedAt: started,
                configuration: configuration.origin, store: store.path, clock: clockTrust.state().description,
                plugins: statusBoard.snapshot(), heartRate: arbiter.counts,
                migration: steps?.map(StatusReport.MigrationStep.init),
                watchdog: notifications.report, previousRun: previousRun.value))
        }
        handlers["ping"] = { _ in .string("pong") }
        let control = ControlServer(path: socketPath, handlers: handlers, logger: logger.child("control"))
        do {
            try await control.start()
        } catch let error where error.errno == EADDRINUSE {
            throw CommandError(.unavailable, "\(error); stop it first or set \"controlSocket\" in the configuration")
        } catch {
            // The gateway still works without its control socket; say so loudly.
            logger.warning("control socket unavailable (\(error)); 'healthgate status' will not reach this process")
        }
        defer { control.stop() }
        let marker = Self.markRun(statePath: paths.statePath, startedAt: started, logger: logger) { previousRun.set($0) }
        // Every return and throw from here is a stop, not a crash (a forced exit ends it below).
        defer { marker?.end() }

        let shutdown = ShutdownSignal()
        // What the signals and --duration request. With an onStop, a request of its own that
        // reaches the gateway once onStop is done (or at once when forced); else the gateway's.
        let requests = onStop == nil ? shutdown : ShutdownSignal()
        let forwardForced = requests.onStage(.forced) { shutdown.force() }
        defer { forwardForced.cancel() }
        // On the thread that requests the stop, however quickly the gateway then drains.
        let tellStopping = requests.onStage(.stopping) { notifications.stopping() }
        defer { tellStopping.cancel() }
        let shutdownTimeout = Duration.milliseconds(Int64(configuration.shutdownTimeoutSeconds * 1000))
        // Armed before the signals are watched, so that no stop request can miss it.
        let forcedExit = ForcedExit(shutdown: shutdown, deadline: shutdownTimeout) {
            control.removeSocketFile()
            marker?.end()
        }
        defer { forcedExit.cancel() }
        let signals = SignalWatcher(shutdown: requests, logger: logger)
        defer { signals.cancel() }
        // The configured ones only: the workouts' built-in source and sink and the executable's
        // own (the demo's console) are not in the file the line names.
        logger.info(
            "started with \(String(count: sources.count, "source")) and "
                + "\(String(count: sinks.count + followers.count, "sink")) from \(configuration.origin)")

        let readiness = "running: \(String(count: sources.count, "source")) and \(String(count: sinks.count + followers.count, "sink")) "
            + "from \(configuration.origin), store \(store.path)"
        let outcome = await withTaskGroup(of: Void.self) { group -> Gateway.StopOutcome in
            if let duration {
                group.addTask {
                    do {
                        try await clock.sleep(for: .milliseconds(Int64(duration * 1000)))
                        logger.info("--duration of \(duration) s reached: stopping")
                        requests.requestStop()
                    } catch {}  // Cancelled: the gateway already stopped.
                }
            }
            if let onStop, requests !== shutdown {
                let workouts = services.workouts
                group.addTask {
                    await requests.wait(for: .stopping)
                    // Cancelled: the gateway ended on its own. Forced: the gateway is already stopping.
                    guard !Task.isCancelled, shutdown.stage == .running else { return }
                    do {
                        let outcome = try await race(sleep: { try await clock.sleep(for: shutdownTimeout) }) {
                            await onStop(workouts)
                        }
                        if case .timedOut = outcome { logger.warning("the work before stopping took longer than \(shutdownTimeout); stopping") }
                    } catch {}  // Cancelled: the gateway already stopped.
                    shutdown.requestStop()
                }
            }
            for work in background {
                group.addTask {
                    do {
                        try await work()
                    } catch where !(error is CancellationError) {
                        logger.error("background task failed: \(error)")
                    } catch {}
                }
            }
            let outcome = await gateway.runReportingOutcome(shutdown: shutdown) { notifications.ready(readiness) }
            group.cancelAll()
            return outcome
        }
        // A forced stop exits within ForcedExit's grace whatever still waits here: the store's
        // close is a transaction (the open series closed), which waits for the lock that stuck
        // the stop. Its series stay open and are closed at the next start.
        if outcome != .forced { forcedExit.cancel() }
        for server in servers { await server.stop() }
        if let error = await store.close() {
            logger.error("cannot close the quantity series being filled (they stay open in \(store.path) and are closed at the next start): \(error)")
        }
        // The configured plugins only, as the start line: not the workouts' built-in ones.
        let configured = Set(sources.map(\.name) + sinks.map(\.name) + followers.map(\.name))
        let plugins = statusBoard.snapshot().filter { configured.contains($0.name) }
        func counts(_ role: PluginRole) -> String {
            let text = plugins.filter { $0.role == role }.map { "\($0.name) \($0.records)" }.joined(separator: ", ")
            return text.isEmpty ? "none" : text
        }
        logger.info("stopped (records published: \(counts(.source)); records written: \(counts(.sink)))")
        return outcome == .drained ? .success : .failure
    }

    /// Marks this run in the state directory (LinuxSystem's ``RunMarker``) and hands `previous`
    /// how the last run ended when it did not stop cleanly, which is also logged. Nil, with a
    /// warning, when the mark cannot be made: the gateway runs on without it.
    static func markRun(
        statePath: String, startedAt: Date, logger: Logger, previous: (StatusReport.PreviousRun) -> Void
    ) -> RunMarker? {
        let path = FileSystem.join(statePath, "run-marker")
        let milliseconds = Int64((startedAt.timeIntervalSince1970 * 1000).rounded())
        let marker: RunMarker
        let unclean: UncleanEnd?
        do {
            (marker, unclean) = try RunMarker.begin(path: path, pid: getpid(), startedAt: milliseconds)
        } catch {
            logger.warning("cannot mark this run in \(path) (\(error)): a crash will not show in the next run's status")
            return nil
        }
        if let unclean {
            let report = StatusReport.PreviousRun(unclean)
            logger.warning("the previous run \(report.text)")
            previous(report)
        }
        return marker
    }

    /// Readies the store for the remote sinks that follow it: forgets followers no longer
    /// configured (so they hold no log), and, when the configuration has remote sinks but no
    /// `sqlite` sink, keeps records only until every remote sink acknowledged them.
    static func prepareFollowers(
        _ followers: [ConfiguredFollower], journalOnly: Bool, store: HealthStore, logger: Logger
    ) async throws {
        do {
            let removed = try await store.removeFollowers(keeping: followers.map(\.name))
            for name in removed {
                logger.notice("the remote sink \(name) is no longer configured: the store stops keeping its changes")
            }
            if journalOnly {
                try await store.setRetention(.untilAcknowledged)
                logger.info(
                    "no sqlite sink: the store keeps records only until every remote sink has them "
                        + "(add {\"kind\": \"sqlite\"} to keep them for queries)")
            }
        } catch {
            throw CommandError(.ioError, "cannot prepare the store for the remote sinks: \(error)")
        }
    }

    /// What plugins know of the participants: the configured roster with the run-time
    /// assignments stored so far applied (as the workouts restore it), each with their
    /// profile's figures. A stored assignment that cannot be read or applied is logged and left
    /// out; the workouts report it too.
    static func participants(
        of configuration: GatewayConfiguration, profile: UserProfile, store: HealthStore, logger: Logger
    ) -> [ParticipantCharacteristics] {
        // Checked with the rest of the configuration before (an invalid roster stops the run).
        guard var roster = try? ParticipantRoster.decode(configuration.participants, defaultProfile: profile) else { return [] }
        do {
            for assignment in try store.storedParticipantAssignments() {
                do {
                    try roster.apply(assignment)
                } catch {
                    logger.warning("participants: stored assignment of \(assignment.device) not applied: \(error)")
                }
            }
        } catch {
            logger.warning("participants: stored assignments unreadable, using the configured devices: \(error)")
        }
        return roster.participants.map {
            ParticipantCharacteristics(name: $0.name, devices: $0.devices, characteristics: $0.profile.characteristics)
        }
    }

    /// Opens the gateway's store read-write (creating and migrating it), off the cooperative pool,
    /// its writer telling idle quantity series on `uptime`, the gateway's monotonic clock.
    /// - Throws: ``CommandError``: 78 for a file that is not a healthgate store or comes from a
    ///   newer healthgate (the configuration points at it), 65 for a corrupt file, 74 for I/O.
    static func openStore(
        _ settings: StoreConfiguration.Settings, origin: String, uptime: @escaping @Sendable () -> Duration
    ) async throws -> HealthStore {
        do {
            return try await HealthStore.open(path: settings.path, maximumPageCount: settings.maximumPageCount, uptime: uptime)
        } catch {
            let advice = switch error.code {
            case .notAStore: " (set store.path in \(origin) to another file)"
            case .schemaTooNew: " (upgrade healthgate, or set store.path in \(origin) to another file)"
            case .corrupt: " (move the file aside and start again, or restore a backup)"
            default: ""
            }
            let status: ExitCode = switch error.code {
            case .notAStore, .schemaTooNew: .configuration
            case .corrupt, .invalidData: .dataError
            case .readOnly, .ioError, .diskFull, .busy: .ioError
            default: .software
            }
            throw CommandError(status, "cannot open the store: \(error)\(advice)")
        }
    }

    /// The configuration's `gatewayName`, else the host name.
    static func gatewayName(of configuration: GatewayConfiguration) -> String {
        configuration.gatewayName ?? ProcessControl.hostName() ?? "healthgate"
    }

    /// What every record gets where its source set none: the gateway's name, this healthgate's
    /// version and the time zone (configured, else `$TZ` or the system's).
    /// Whose heart rate a device's records are, for the heart-rate arbiter: the participant
    /// wearing it now (any of their listed identities naming it), else the strap itself. Read on
    /// every heart-rate record, so an assignment takes effect with the next one.
    static func wearer(in workouts: ParticipantWorkouts) -> @Sendable (Device) -> String? {
        { device in
            if let participant = workouts.roster.owner(of: device) { return "participant:\(participant.name)" }
            return HeartRateArbiter.strapGroup(device)
        }
    }

    static func provenance(of configuration: GatewayConfiguration, gatewayName: String, variables: [String: String]) -> Metadata {
        var stamp = Metadata()
        stamp[.gatewayName] = .string(gatewayName)
        stamp[.gatewayVersion] = .string(HealthgateCLI.version)
        // The name only: the configured one was checked when the configuration was, and the
        // host's is read without loading the tz database.
        stamp[.timeZone] = .string(configuration.timeZone ?? LocalTimeZoneName.resolve(variables: variables))
        return stamp
    }

    /// Whether systemd runs the daemon as a service with its own directories (then the unit
    /// sets the file mode mask and the directories' modes).
    static func isSystemdService(_ variables: [String: String]) -> Bool {
        !(variables["STATE_DIRECTORY"] ?? "").isEmpty || !(variables["RUNTIME_DIRECTORY"] ?? "").isEmpty
    }
}

/// What `healthgate status` receives from the daemon.
struct StatusReport: Codable, Sendable {
    /// How the previous run ended when it did not stop cleanly (``RunMarker``); absent after a
    /// clean stop, and from an older daemon.
    struct PreviousRun: Codable, Sendable {
        var pid: Int
        var startedAt: Date
        /// `crash` (a fatal signal left its mark) or `unclean` (no mark: SIGKILL, a power cut).
        var ended: String
        /// The fatal signal's name, for a crash.
        var signal: String?
        /// When the fatal signal arrived, for a crash.
        var crashedAt: Date?

        init(_ end: UncleanEnd) {
            pid = Int(end.pid)
            startedAt = Date(timeIntervalSince1970: Double(end.startedAt) / 1000)
            ended = end.crash == nil ? "unclean" : "crash"
            signal = end.crash?.signalName
            crashedAt = end.crash.map { Date(timeIntervalSince1970: Double($0.at) / 1000) }
        }

        /// `crashed (SIGSEGV) at …, pid 41, up since …` or `ended without a clean stop (…)`.
        var text: String {
            let since = "pid \(pid), up since \(RFC3339.string(from: startedAt))"
            if let signal, let crashedAt {
                return "crashed (\(signal)) at \(RFC3339.string(from: crashedAt)), \(since)"
            }
            return "ended without a clean stop (killed with SIGKILL, or the machine stopped), \(since)"
        }
    }

    var version: String
    var pid: Int
    var startedAt: Date
    var configuration: String
    /// The store's file.
    var store: String?
    /// Whether the wall clock is synchronized (``ClockState``).
    var clock: String?
    var plugins: [PluginStatus]
    /// What the heart-rate arbiter did (``HeartRateArbiter/counts``): readings dropped as a
    /// second path's copy, handovers between paths. Absent from an older daemon.
    var heartRate: HeartRateArbiter.Counts?
    /// The store's background migration, a step each (empty when the store never had one to
    /// run); absent from an older daemon.
    var migration: [MigrationStep]?

    /// One step of the store's background migration (``StoreMigrationStep``) as `status` shows it.
    struct MigrationStep: Codable, Sendable {
        /// `heartbeats` or `workout_samples`.
        var step: String
        /// Rows handled, at most ``total``.
        var done: Int
        /// Rows the step had to handle when the upgrade began.
        var total: Int
        var finished: Bool
        var started: Date
        /// When it finished; absent while it runs.
        var finishedAt: Date?

        init(_ step: StoreMigrationStep) {
            self.step = step.name
            done = step.handled
            total = step.total
            finished = step.finished != nil
            started = step.started
            finishedAt = step.finished
        }
    }

    /// systemd's watchdog (``WatchdogReport``); absent when systemd does not watch the daemon
    /// (no `WatchdogSec=`, or not run by systemd) and from an older daemon.
    var watchdog: WatchdogReport?
    /// How the previous run ended, when it did not stop cleanly.
    var previousRun: PreviousRun?
}
