import Foundation
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
///    their queues and flush. `run` returns when every sink has returned.
/// 4. A second request, or `shutdownTimeout` after the first, cancels the sinks as well and
///    finishes the bus; records still queued are then abandoned.
public final class Gateway: Sendable {
    public let bus: SampleBus
    public let statusBoard: StatusBoard
    private let sources: [(ConfiguredSource, StatusReporter)]
    private let sinks: [(ConfiguredSink, StatusReporter, SinkInbox)]
    private let clock: any GatewayClock
    private let logger: Logger
    private let restartPolicy: RestartPolicy
    private let shutdownTimeout: Duration

    public init(
        sources: [ConfiguredSource], sinks: [ConfiguredSink], clock: any GatewayClock,
        logger: Logger, statusBoard: StatusBoard = StatusBoard(),
        restartPolicy: RestartPolicy = RestartPolicy(), shutdownTimeout: Duration = .seconds(10)
    ) {
        let sinkReporters = sinks.map { statusBoard.register(name: $0.name, kind: $0.kind, role: .sink) }
        // Every sink that stores checkpoints gets them; sources read back from the first one.
        let readers = sinks.map { $0.sink.checkpointReader }
        let bus = SampleBus(
            sinks: zip(sinks, sinkReporters).map { sink, reporter in
                let plugin = sink.sink
                return (sink.name, sink.queue, { plugin.accepts($0) }, reporter)
            },
            storesCheckpoints: readers.map { $0 != nil },
            checkpoints: CheckpointLedger(durable: readers.lazy.compactMap { $0 }.first))
        self.bus = bus
        // Pair each sink with its own subscription by position. Looking it up by name gave a
        // second sink with the same name a private queue that nobody fed or finished.
        self.sinks = zip(zip(sinks, sinkReporters), bus.subscriptions).map { pair, subscription in
            (pair.0, pair.1, subscription.inbox)
        }
        self.sources = sources.map {
            ($0, statusBoard.register(name: $0.name, kind: $0.kind, role: .source))
        }
        self.statusBoard = statusBoard
        self.clock = clock
        self.logger = logger
        self.restartPolicy = restartPolicy
        self.shutdownTimeout = shutdownTimeout
    }

    private enum Finished { case sink, sources, watchdog }

    /// Runs until a stop request has been carried out. See the type's documentation.
    public func run(shutdown: ShutdownSignal) async {
        await withTaskGroup(of: Finished.self) { group in
            for (sink, status, inbox) in sinks {
                group.addTask {
                    await self.supervise(name: sink.name, status: status, onRestart: {
                        inbox.queue.prepareForRedelivery()
                    }) {
                        try await sink.sink.run(
                            inbox: inbox,
                            context: SinkContext(logger: self.logger.child(sink.name), clock: self.clock, status: status))
                    }
                    return .sink
                }
            }
            group.addTask {
                await self.runSources(until: shutdown)
                self.logger.info("sources stopped; draining \(self.sinks.count) sink(s)")
                self.bus.finish()
                return .sources
            }
            group.addTask {
                await shutdown.wait(for: .stopping)
                await withTaskGroup(of: Void.self) { race in
                    race.addTask { await shutdown.wait(for: .forced) }
                    race.addTask { try? await self.clock.sleep(for: self.shutdownTimeout) }
                    await race.next()
                    race.cancelAll()
                }
                return .watchdog
            }
            var remaining = sinks.count + 1
            while remaining > 0, let finished = await group.next() {
                switch finished {
                case .sink, .sources: remaining -= 1
                case .watchdog:
                    logger.warning(shutdown.stage == .forced
                        ? "second stop request: forcing shutdown"
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
        }
    }

    private func runSources(until shutdown: ShutdownSignal) async {
        await withTaskGroup(of: Bool.self) { group in
            for (source, status) in sources {
                group.addTask {
                    let publisher = SamplePublisher(bus: self.bus, status: status)
                    await self.supervise(name: source.name, status: status, onRestart: {}) {
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
            // Sources that finish on their own are fine; the stop request ends the rest.
            while let isStop = await group.next() {
                if isStop {
                    group.cancelAll()
                }
            }
        }
    }

    /// Runs `body` until it returns, restarting it with backoff when it throws.
    private func supervise(
        name: String, status: StatusReporter, onRestart: @Sendable () -> Void,
        _ body: @Sendable () async throws -> Void
    ) async {
        var attempt = 0
        while true {
            status.setState(.running)
            // The injected clock, not ContinuousClock: `resetAfter` is then testable with a
            // ManualClock, and the same clock dates the error.
            let started = clock.now()
            do {
                try await body()
                status.setState(Task.isCancelled ? .stopped : .finished)
                return
            } catch {
                if Task.isCancelled {
                    status.setState(.stopped)
                    return
                }
                let failed = clock.now()
                let ran = failed.timeIntervalSince(started)
                attempt = ran >= restartPolicy.resetAfter.seconds ? 1 : attempt + 1
                let delay = restartPolicy.delay(attempt: attempt)
                logger.error("\(name) failed: \(error); restarting in \(delay.seconds) s (attempt \(attempt))")
                status.reportError("\(error)", at: failed)
                status.setState(.restarting)
                status.countRestart()
                do {
                    try await clock.sleep(for: delay)
                } catch {
                    status.setState(.stopped)
                    return
                }
                onRestart()
            }
        }
    }
}
