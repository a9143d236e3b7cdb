import AsyncPrimitives
import GatewayControl
import GatewayRuntime
import GatewayTime
import HealthModel
import HealthStore
import Metrics
import SampleBus
import WebBoard
import WorkoutPresentation
import WorkoutRuntime
import Workouts
extension GatewayRunner {
    /// A gateway made and not yet started: its parts in start order, and what the runner reads
    /// while it runs and once it stopped.
    struct Assembly {
        let parts: GatewayParts
        let bus: Gateway
        /// The configured plugins (not the built-in ones, nor the executable's own sinks).
        let plugins: BuiltPlugins
        let store: HealthStore
        let statusBoard: StatusBoard
        let notifications: ServiceNotifications
        let control: ControlServer
        let runMark: RunMark
    }

    /// Makes each part of the gateway, each by one function, and declares the order they start
    /// in (they stop in reverse): the store first, the gateway's commit point, opened once and
    /// handed to every part that reads or writes it; the control socket after the servers; the
    /// work that only runs beside the bus last.
    /// - Throws: ``CommandError`` when the store cannot be opened or a plugin cannot be made;
    ///   nothing has started then.
    func assemble(_ facts: RunFacts, stop: GatewayStop, duration: Double?) async throws -> Assembly {
        let clock = facts.clock
        let store = try await Self.openStore(facts.store, origin: facts.configuration.origin, uptime: { clock.uptime() })
        facts.logger.info("store: \(store.path)")
        let plugins = try await makePlugins(facts, store: store)
        let clockTrust = facts.clockTrust
        let services = try GatewayServices(
            configuration: facts.configuration, store: store, paths: facts.paths, logger: facts.logger, clock: clock,
            ids: facts.ids, clockBase: { clockTrust.clockBase() })
        // Before the control socket answers, so no command sees the demo's class half started.
        if let onStart { await onStart(services.workouts) }
        // What `status` and `GET /metrics` read.
        let statusBoard = StatusBoard()
        let arbiter = HeartRateArbiter(clock: clock, group: Self.wearer(in: services.workouts))
        try await Self.attributeReadings(store: store, workouts: services.workouts, logger: facts.logger)
        // systemd's Type=notify protocol: ready, the watchdog's pings, stopping.
        let notifications = ServiceNotifications(variables: facts.variables, clock: clock, logger: facts.logger.child("systemd"))
        let board = try makeBoard(facts, workouts: services.workouts)
        let bus = makeBus(
            facts, plugins: plugins, services: services, boardSink: board?.sink, statusBoard: statusBoard, arbiter: arbiter)
        let storeFacts = StoreFactsWatch(store: store, clock: clock)
        let metrics = GatewayMetrics(
            statusBoard: statusBoard, storeFacts: storeFacts, clockTrust: clockTrust, clock: clock,
            queueDepths: { bus.queueDepths() }, heartRateArbiter: arbiter, watchdog: { notifications.report })
        let runMark = RunMark()
        let control = makeControl(
            facts, handlers: services.controlHandlers.merging(
                Self.statusHandlers(
                    facts, store: store, storeFacts: storeFacts, statusBoard: statusBoard, arbiter: arbiter,
                    notifications: notifications,
                    runMark: runMark)
            ) { _, new in new })
        // The start order, declared here only; the parts stop in reverse.
        let parts: [GatewayPart?] = [
            Self.storePart(store, facts),
            Self.storeFactsPart(storeFacts),
            Self.clockWatchPart(facts, store: store, workouts: services.workouts),
            try Self.metricsPart(facts, metrics: metrics),
            try board.map { try Self.boardPart($0, facts, store: store, metrics: metrics) },
            Self.watchdogPart(notifications, store: store, bus: bus),
            Self.controlPart(control, logger: facts.logger),
            Self.runMarkPart(runMark, facts),
        ] + backgroundParts() + [
            duration.map { Self.durationPart($0, stop: stop, facts) },
            workBeforeStoppingPart(stop: stop, workouts: services.workouts, facts),
        ]
        return Assembly(
            parts: GatewayParts(parts: parts.compactMap { $0 }, logger: facts.logger), bus: bus, plugins: plugins,
            store: store, statusBoard: statusBoard, notifications: notifications, control: control, runMark: runMark)
    }

    /// ``background``, a part each.
    func backgroundParts() -> [GatewayPart?] {
        background.enumerated().map { GatewayPart(name: "background work \($0.offset + 1)", work: $0.element) }
    }

    /// The bus: the configured sources and sinks, the built-in ones (the workouts), the
    /// executable's own sinks and the board's, and the remote sinks' followers.
    func makeBus(
        _ facts: RunFacts, plugins: BuiltPlugins, services: GatewayServices, boardSink: ConfiguredSink?,
        statusBoard: StatusBoard, arbiter: HeartRateArbiter
    ) -> Gateway {
        let clockTrust = facts.clockTrust
        return Gateway(
            sources: plugins.sources + services.sources,
            sinks: plugins.sinks + extraSinks + services.sinks + (boardSink.map { [$0] } ?? []),
            followers: plugins.followers, clock: facts.clock, logger: facts.logger, statusBoard: statusBoard,
            shutdownTimeout: facts.shutdownTimeout,
            provenance: Self.provenance(of: facts.configuration, gatewayName: facts.gatewayName, variables: facts.variables),
            clockBase: { clockTrust.clockBase() }, heartRateArbiter: arbiter)
    }

    /// Gives the store the configured participants its writer attributes each reading by
    /// (``HealthStore/attributeReadings(by:)``): their devices and shared devices. Each person
    /// sharing a device starts from a reference weight: their latest weighing in the store, else
    /// their profile's weight.
    /// - Throws: ``CommandError`` when the store cannot be read.
    static func attributeReadings(store: HealthStore, workouts: ParticipantWorkouts, logger: Logger) async throws {
        var weights: [String: Double] = [:]
        let participants = workouts.configuredRoster.participants
        for participant in participants where !participant.sharedDevices.isEmpty {
            let latest = try await StoreAccess.call { () async throws(StoreError) in
                try await store.samples(of: .bodyMass, limit: 1, order: .descending, filter: SampleFilter(person: .named(participant.name)))
            }
            if let weight = latest.first?.canonicalValue ?? participant.profile.weightKilograms { weights[participant.name] = weight }
        }
        if !weights.isEmpty {
            logger.info(
                "attribution: reference weights " + weights.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value) kg" }.joined(separator: ", "))
        }
        let roster = AttributionRoster(participants.map {
            AttributionRoster.Person(
                name: $0.name, devices: $0.devices, sharedDevices: $0.sharedDevices, referenceWeightKilograms: weights[$0.name])
        })
        try await StoreAccess.call { () async throws(StoreError) in try await store.attributeReadings(by: roster) }
    }

    /// The store's part: its maintenance beside ingest (retention, the background migration of
    /// an upgraded store and the closing of idle quantity series, each holding the writer for a
    /// batch at most), and its close once every part that writes into it has stopped.
    static func storePart(_ store: HealthStore, _ facts: RunFacts) -> GatewayPart {
        let settings = facts.store, clock = facts.clock, logger = facts.logger
        return GatewayPart(
            name: "store",
            work: {
                try await StoreMaintenance(
                    store: store, tombstoneRetention: settings.tombstoneRetention, sampleRetention: settings.sampleRetention,
                    keepWorkoutSamples: settings.keepWorkoutSamples, clock: clock, logger: logger)
                    .run()
            },
            stop: {
                if let error = await store.close() {
                    logger.error(
                        "cannot close the quantity series being filled (they stay open in \(store.path) and are closed at "
                            + "the next start): \(error)")
                }
            })
    }

    /// What `status`, `/metrics` and the board say of the store, read beside them: first when
    /// the part starts, so the first `status` has them, then every second.
    static func storeFactsPart(_ storeFacts: StoreFactsWatch) -> GatewayPart {
        GatewayPart(name: "store facts", start: { try? await storeFacts.refresh() }, work: { try await storeFacts.run() })
    }

    /// Watches the wall clock for steps and moves what was dated on the old base onto the new
    /// one (``ClockStepCorrection``).
    static func clockWatchPart(_ facts: RunFacts, store: HealthStore, workouts: ParticipantWorkouts) -> GatewayPart {
        let correction = ClockStepCorrection(store: store, workouts: workouts, logger: facts.logger, clock: facts.clock)
        let trust = facts.clockTrust, clock = facts.clock, logger = facts.logger
        return GatewayPart(
            name: "clock watch",
            work: {
                try await ClockWatch(trust: trust, clock: clock, logger: logger) { base, previous in
                    await correction(onto: base, from: previous)
                }.run()
            })
    }

    /// systemd's watchdog: pings while the store's writer and the sinks' queues make progress
    /// (``ServiceNotifications/runWatchdog(observe:)``).
    static func watchdogPart(_ notifications: ServiceNotifications, store: HealthStore, bus: Gateway) -> GatewayPart {
        GatewayPart(
            name: "watchdog",
            work: {
                try await notifications.runWatchdog {
                    PipelineWatchdog.Observation(writer: store.writerActivity, queues: bus.queueHeads())
                }
            })
    }
}
