public import GatewayRuntime
import AsyncPrimitives
import FoundationEssentials
import Synchronization
public import HealthModel

/// How the supervisor restarts a plugin that threw.
public struct RestartPolicy: Sendable, Hashable {
    /// The first delay; it doubles after each consecutive failure.
    public var initialDelay: Duration
    public var maximumDelay: Duration
    /// A plugin that ran at least this long before failing starts again from `initialDelay`.
    public var resetAfter: Duration

    public init(initialDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(60),
                resetAfter: Duration = .seconds(60)) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.resetAfter = resetAfter
    }

    /// The delay before restart number `attempt` (1-based).
    public func delay(attempt: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(1, attempt) where delay < maximumDelay { delay = delay * 2 }
        return min(delay, maximumDelay)
    }
}

/// Runs sources and sinks under supervision around one bus, and stops them in order.
///
/// Life cycle of ``run(shutdown:)``:
/// 1. Every sink subscribes (its queue exists) and starts, then every source starts.
/// 2. A source or sink that throws is restarted with exponential backoff; its error goes to the
///    log and its status. The others keep running.
/// 3. On the first stop request, sources are cancelled, the bus is finished, and sinks drain
///    their queues and flush. `run` returns when every sink has returned. No backoff is waited
///    out during the stop: a sink waiting to restart restarts at once, and one that fails again
///    while draining is restarted at once up to ``maximumRestartsWhileStopping`` times, then
///    given up (its queued records are reported, and the outcome says so). Sinks see the stop on
///    ``SinkContext/stopRequest`` and cut their own retry sleeps short with it.
/// 4. A second request, or `shutdownTimeout` after the first, cancels the sinks as well and
///    finishes the bus; records still queued are then abandoned.
public final class Gateway: Sendable {
    public let bus: SampleBus
    public let statusBoard: StatusBoard
    private let sources: [(ConfiguredSource, StatusReporter)]
    private let sinks: [(ConfiguredSink, StatusReporter, SinkInbox)]
    private let followers: [(ConfiguredFollower, StatusReporter)]
    /// Set once a stop was requested and every sink returned: the store holds all it will.
    private let storeSettled = Mutex(false)
    private let clock: any GatewayClock
    private let logger: Logger
    private let restartPolicy: RestartPolicy
    private let shutdownTimeout: Duration
    private let provenance: Metadata
    private let clockBase: (@Sendable () -> ClockBase)?

    /// `provenance`: metadata every source's records get where they have none of their own (the
    /// gateway's name, version and time zone); each source adds its own name to it
    /// (``MetadataKey/sourceName``). Empty: records are published as the sources make them.
    /// `clockBase`: the base of the gateway's clock (``ClockBase``), stamped on every record not
    /// dated by a device's own clock, so that a step of the clock can move it; nil: none.
    /// `heartRateArbiter`: feeds each wearer's heart rate once when a strap is heard on two paths
    /// (``HeartRateArbiter``); nil: every record goes on as published.
    public init(
        sources: [ConfiguredSource], sinks: [ConfiguredSink], followers: [ConfiguredFollower] = [], clock: any GatewayClock,
        logger: Logger, statusBoard: StatusBoard = StatusBoard(),
        restartPolicy: RestartPolicy = RestartPolicy(), shutdownTimeout: Duration = .seconds(10),
        provenance: Metadata = Metadata(), clockBase: (@Sendable () -> ClockBase)? = nil,
        heartRateArbiter: HeartRateArbiter? = nil
    ) {
        self.clockBase = clockBase
        let sinkReporters = sinks.map { statusBoard.register(name: $0.name, kind: $0.kind, role: .sink) }
        // Every sink that stores checkpoints gets them; sources read back from the first one.
        let readers = sinks.map { $0.sink.checkpointReader }
        let bus = SampleBus(
            sinks: zip(sinks, sinkReporters).map { sink, reporter in
                let plugin = sink.sink
                return (sink.name, sink.queue, { plugin.accepts($0) }, reporter)
            },
            storesCheckpoints: readers.map { $0 != nil },
            checkpoints: CheckpointLedger(durable: readers.lazy.compactMap { $0 }.first), arbiter: heartRateArbiter)
        self.bus = bus
        // Pair each sink with its own subscription by position. Looking it up by name gave a
        // second sink with the same name a private queue that nobody fed or finished.
        self.sinks = zip(zip(sinks, sinkReporters), bus.subscriptions).map { pair, subscription in
            (pair.0, pair.1, subscription.inbox)
        }
        self.sources = sources.map {
            ($0, statusBoard.register(name: $0.name, kind: $0.kind, role: .source))
        }
        self.followers = followers.map {
            ($0, statusBoard.register(name: $0.name, kind: $0.kind, role: .sink))
        }
        self.statusBoard = statusBoard
        self.clock = clock
        self.logger = logger
        self.restartPolicy = restartPolicy
        self.shutdownTimeout = shutdownTimeout
        self.provenance = provenance
    }

    /// Records waiting in each sink's queue, by sink name.
    public func queueDepths() -> [(sink: String, depth: Int)] {
        sinks.map { ($0.0.name, $0.2.depth) }
    }

    /// Where each sink stands with its queue, for the watchdog (``PipelineWatchdog``).
    public func queueHeads() -> [PipelineWatchdog.QueueHead] {
        sinks.map { sink in
            let progress = sink.2.queue.progress
            return PipelineWatchdog.QueueHead(
                sink: sink.0.name, pending: progress.pending, acknowledged: progress.acknowledged, window: sink.0.sink.batchWindow)
        }
    }

    /// How often a sink that fails while draining is restarted at once before it is given up.
    /// Enough for a transient failure; few enough that a sink failing at once every time (a
    /// full disk) does not spin until the deadline.
    public static let maximumRestartsWhileStopping = 3

    /// How a ``run(shutdown:)`` ended.
    public enum StopOutcome: Sendable, Hashable {
        /// Every sink drained its queue and returned.
        case drained
        /// The named sinks failed while draining and were given up; records were left queued.
        case abandoned(sinks: [String])
        /// The stop was forced (second request or deadline); queued records were abandoned.
        case forced
    }

    private enum Finished { case sink(abandoned: String?), follower, sources, watchdog }

    /// Runs until a stop request has been carried out. See the type's documentation, and
    /// ``runReportingOutcome(shutdown:)`` for how the stop went.
    public func run(shutdown: ShutdownSignal) async {
        _ = await runReportingOutcome(shutdown: shutdown)
    }

    /// ``run(shutdown:)``, returning whether every sink drained. `started` runs once every sink,
    /// follower and source has been started (the executable tells systemd it is ready then).
    public func runReportingOutcome(shutdown: ShutdownSignal, started: @escaping @Sendable () -> Void = {}) async -> StopOutcome {
        let stopRequest = StopRequest(shutdown)
        return await withTaskGroup(of: Finished.self) { group in
            for (sink, status, inbox) in sinks {
                group.addTask {
                    let completed = await self.supervise(
                        name: sink.name, status: status, stopRequest: stopRequest, restartsWhileStopping: true,
                        onRestart: { inbox.queue.prepareForRedelivery() }
                    ) {
                        try await sink.sink.run(
                            inbox: inbox,
                            context: SinkContext(
                                logger: self.logger.child(sink.name), clock: self.clock, status: status,
                                stopRequest: stopRequest))
                    }
                    if !completed, shutdown.stage < .forced {
                        self.logger.error(
                            "\(sink.name) keeps failing while draining; giving it up with \(String(count: inbox.depth, "record")) still queued")
                        return .sink(abandoned: sink.name)
                    }
                    return .sink(abandoned: nil)
                }
            }
            for (follower, status) in followers {
                group.addTask {
                    // Not restarted while stopping: what it has not sent stays in the store, and its
                    // cursor says where the next start resumes.
                    await self.supervise(
                        name: follower.name, status: status, stopRequest: stopRequest, restartsWhileStopping: false,
                        onRestart: {}
                    ) {
                        try await follower.follower.run(
                            context: FollowerContext(
                                logger: self.logger.child(follower.name), clock: self.clock, status: status,
                                stopRequest: stopRequest, storeSettled: { self.storeSettled.withLock { $0 } }))
                    }
                    return .follower
                }
            }
            group.addTask {
                await self.runSources(until: shutdown, started: started)
                self.logger.info("sources stopped; draining the sinks")
                self.bus.finish()
                return .sources
            }
            group.addTask {
                await shutdown.wait(for: .stopping)
                do {
                    _ = try await race(sleep: { try await self.clock.sleep(for: self.shutdownTimeout) }) {
                        await shutdown.wait(for: .forced)
                    }
                } catch {
                    // Cancelled: every sink returned and the group is ending.
                }
                return .watchdog
            }
            var remaining = sinks.count + followers.count + 1
            var sinksRunning = sinks.count
            var sourcesRunning = true
            var abandoned: [String] = []
            if sinksRunning == 0 { storeSettled.withLock { $0 = true } }
            while remaining > 0, let finished = await group.next() {
                switch finished {
                case .sink(let name):
                    remaining -= 1
                    sinksRunning -= 1
                    if sinksRunning == 0 { storeSettled.withLock { $0 = true } }
                    if let name { abandoned.append(name) }
                case .follower: remaining -= 1
                case .sources:
                    remaining -= 1
                    sourcesRunning = false
                case .watchdog:
                    logger.warning(
                        shutdown.stage == .forced
                            ? "second stop request: forcing shutdown"
                            : sourcesRunning
                                ? "sources did not stop within \(shutdownTimeout) (one waits on a device or service that does not answer); forcing shutdown"
                                : "sinks did not drain within \(shutdownTimeout); forcing shutdown")
                    shutdown.force()
                    // Release sources parked on a full `.block` queue: they wait through
                    // cancellation (so a graceful stop loses nothing), so only finishing the bus
                    // lets them return now.
                    bus.finish()
                    group.cancelAll()
                }
            }
            group.cancelAll()
            if shutdown.stage == .forced { return .forced }
            return abandoned.isEmpty ? .drained : .abandoned(sinks: abandoned)
        }
    }

    private func runSources(until shutdown: ShutdownSignal, started: @Sendable () -> Void) async {
        let stopRequest = StopRequest(shutdown)
        await withTaskGroup(of: Bool.self) { group in
            for (source, status) in sources {
                group.addTask {
                    var stamp = self.provenance
                    if !stamp.isEmpty { stamp[.sourceName] = .string(source.name) }
                    let publisher = SamplePublisher(bus: self.bus, status: status, stamp: stamp, clockBase: self.clockBase)
                    await self.supervise(
                        name: source.name, status: status, stopRequest: stopRequest, restartsWhileStopping: false,
                        onRestart: {}
                    ) {
                        try await source.source.run(context: SourceContext(
                            publisher: publisher, logger: self.logger.child(source.name),
                            clock: self.clock, status: status))
                    }
                    return false
                }
            }
            group.addTask {
                await shutdown.wait(for: .stopping)
                return true
            }
            started()
            // Sources that finish on their own are fine; the stop request ends the rest.
            while let isStop = await group.next() {
                if isStop {
                    group.cancelAll()
                }
            }
        }
    }

    /// Runs `body` until it returns, restarting it with backoff when it throws.
    ///
    /// The backoff never outlives a stop request: a source is not restarted once a stop was
    /// requested, and a sink (`restartsWhileStopping`) is restarted at once, up to
    /// ``maximumRestartsWhileStopping`` times after the request.
    /// - Returns: false when a sink was given up while stopping, true otherwise.
    @discardableResult
    private func supervise(
        name: String, status: StatusReporter, stopRequest: StopRequest, restartsWhileStopping: Bool,
        onRestart: @Sendable () -> Void, _ body: @Sendable () async throws -> Void
    ) async -> Bool {
        var attempt = 0
        var restartsAfterStop = 0
        while true {
            status.setState(.running)
            // The injected clock, not ContinuousClock: `resetAfter` is then testable with a
            // ManualClock, and the same clock dates the error.
            let started = clock.uptime()
            do {
                try await body()
                status.setState(Task.isCancelled ? .stopped : .finished)
                return true
            } catch {
                if Task.isCancelled {
                    status.setState(.stopped)
                    return true
                }
                let failed = clock.now()
                let ran = (clock.uptime() - started).seconds
                attempt = ran >= restartPolicy.resetAfter.seconds ? 1 : attempt + 1
                let delay = restartPolicy.delay(attempt: attempt)
                status.reportError("\(error)", at: failed)
                status.countRestart()
                if stopRequest.isRequested {
                    guard restartsWhileStopping, restartsAfterStop < Self.maximumRestartsWhileStopping else {
                        logger.error("\(name) failed while stopping: \(error)")
                        status.setState(.stopped)
                        return !restartsWhileStopping
                    }
                    restartsAfterStop += 1
                    logger.error("\(name) failed while draining: \(error); restarting at once (stopping)")
                    onRestart()
                    continue
                }
                logger.error("\(name) failed: \(error); restarting in \(delay.seconds) s (attempt \(attempt))")
                status.setState(.restarting)
                do {
                    if try await stopRequest.sleep(for: delay, on: clock) == .stopRequested {
                        guard restartsWhileStopping else {
                            status.setState(.stopped)
                            return true
                        }
                        restartsAfterStop += 1
                        logger.info("\(name) restarts at once to drain (stopping)")
                    }
                } catch {
                    status.setState(.stopped)
                    return true
                }
                onRestart()
            }
        }
    }
}
