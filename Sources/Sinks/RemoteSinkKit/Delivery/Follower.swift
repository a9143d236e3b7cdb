import AsyncPrimitives
import FoundationEssentials
import HealthModel
public import HealthStore
import GatewayRuntime
public import SampleBus

/// A remote sink's loop over the store's change log: reads the changes after its cursor, sends
/// them through its ``RemoteReceiver`` in batches, and commits its cursor in the store once the
/// receiver acknowledged them. The store is the only log: a crash costs nothing the store
/// committed, and no sink keeps a journal of its own.
///
/// - **Batches** are anchor ranges. Before a range is first sent it is committed in the store
///   with its key (`follower_batches`), so a batch sent again after a stop or a crash is rebuilt
///   from the same range (``FollowerBatch``). A key names one payload: it is derived from the
///   changes a batch carries and the receiver's payload identity (``BatchKey``), so a rebuilt
///   batch is the same request under the same key, or, when an object in it moved on or the
///   receiver's settings changed, another request under another key. A batch smaller than
///   `batchSize` waits up to `batchInterval` for more changes.
/// - **The window** (``DeliveryWindow``, a pure state machine this type drives): up to
///   `maxInFlight` batches wait for their answers at once; the cursor passes only batches the
///   receiver acknowledged or whose refused changes are dead letters, whatever order the answers
///   come in. A retry is the same request; the receiver's Retry-After pauses every send.
/// - **Failures**: a retryable outcome is retried with backoff (``DeliveryPolicy``); a batch the
///   receiver refuses is split in halves until the one refused change is found, which is stored
///   as a dead letter (`healthgate dead-letters`) and passed over. Letters the operator marks for
///   retry are sent again when the follower is idle.
/// - **Retention**: a follower whose unacknowledged changes exceed `follow.maxBytes` or
///   `follow.maxAgeSeconds` skips the oldest whole transactions (counted in status as `skipped`,
///   logged once per episode). A cursor above the store's latest anchor (the store was replaced)
///   starts again at 0; one below the tombstones kept resumes at the oldest change kept.
/// - **Stopping**: once a stop is requested, a batch that waits (a backoff, a pause) or fails
///   again is given up and no batch begins after it; the follower returns once the answers in
///   flight came, its cursor before the oldest batch given up, and remembers the batches after it
///   that were acknowledged. A Retry-After among those answers is committed for the next start. Without failures it keeps sending until every sink drained into the
///   store and it reached the store's latest anchor.
public struct Follower: Sendable {
    /// The follower's name in the store: the remote sink's instance name.
    public let name: String
    public let store: HealthStore
    public let receiver: any RemoteReceiver
    public let settings: FollowerSettings
    /// An outbox file of the version before followers, imported and removed at the first start.
    public let legacyOutbox: String?
    /// A value in 0..<1 per call, for the backoff's jitter.
    let random: @Sendable () -> Double

    public init(
        name: String, store: HealthStore, receiver: any RemoteReceiver, settings: FollowerSettings,
        legacyOutbox: String? = nil, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.name = name
        self.store = store
        self.receiver = receiver
        self.settings = settings
        self.legacyOutbox = legacyOutbox
        self.random = random
    }

    /// How often an idle follower looks for commits of other processes (`healthgate delete`) and
    /// for dead letters marked for retry.
    static let pollInterval = Duration.seconds(1)
    /// The same while a stop is under way: waiting for the sinks to drain.
    static let stoppingPollInterval = Duration.milliseconds(50)

    /// What wakes the driver: each ends a child task of its group.
    enum Event: Sendable {
        /// The receiver answered an attempt for a batch of the window.
        case answered(slot: Int, DeliveryOutcome)
        /// A commit after the read position, or the poll interval passed.
        case woke
        /// The poll interval passed: time for retention and dead-letter retries.
        case tick
        /// A partial batch waited its interval.
        case intervalDue
        /// A part waiting in the window (a backoff, the receiver's pause) may be due.
        case due
        /// A graceful stop was requested.
        case stopRequested
    }

    /// Follows the log until a stop (see the type's documentation).
    /// - Throws: ``StoreError`` when the store fails (the supervisor restarts the follower);
    ///   `CancellationError` on a forced stop.
    public func run(context: FollowerContext) async throws {
        await receiver.prepare(context: context)
        do {
            try await follow(context: context)
        } catch {
            await receiver.close()
            throw error
        }
        await receiver.close()
    }

    /// The driver around ``DeliveryWindow``: carries out its actions (sends, dead letters,
    /// cursor commits, ``carryOut(_:window:reading:group:context:)``), begins the batches it has
    /// room for, and feeds it events (answers, time, the stop) until it is done. What it knows
    /// of the log is a ``LogReading``; which timers run, ``Timers``.
    private func follow(context: FollowerContext) async throws {
        var (window, reading) = try await start(context: context)
        var timers = Timers()
        try await withThrowingTaskGroup(of: Event.self) { group in
            defer { group.cancelAll() }
            group.addTask {
                await context.stopRequest.wait()
                return .stopRequested
            }
            var actions = window.advance(to: context.clock.uptime())
            while true {
                try Task.checkCancellation()
                try await carryOut(actions, window: &window, reading: &reading, group: &group, context: context)
                try await fill(&window, reading: &reading, timers: &timers, group: &group, context: context)
                if try await isDone(window, reading: reading, context: context) { return }
                schedule(&timers, window: window, reading: reading, group: &group, context: context)
                guard let event = try await group.next() else {
                    actions = []
                    continue
                }
                actions = try await handle(event, window: &window, reading: &reading, timers: &timers, context: context)
            }
        }
    }

    /// Registers the follower (importing a legacy outbox at its first start) and restores what
    /// the last run left: the cursor, the batches begun after it, the receiver's pause.
    private func start(context: FollowerContext) async throws -> (DeliveryWindow, LogReading) {
        let log = context.logger
        var cursor = try await store.registerFollower(name, startingAt: settings.follow.startFrom)
        if let legacyOutbox {
            if try await LegacyOutbox.importIfPresent(path: legacyOutbox, into: store, follower: name, logger: log) {
                cursor = try await store.follower(name) ?? cursor
            }
        }
        var anchor = cursor.anchor
        let bounds = try await store.logBounds()
        if anchor > bounds.latest {
            log.warning(
                "the cursor \(anchor) is above the store's latest anchor \(bounds.latest): the store was replaced; "
                    + "sending its log again from the start")
            try await store.skip(follower: name, to: 0, count: 0)
            anchor = 0
        }
        let reading = LogReading(from: anchor, begun: try await store.followerBatches(name))
        log.info(
            "following the store from anchor \(anchor) (latest \(bounds.latest)) to \(receiver.destination)"
                + (reading.replay.isEmpty ? "" : "; sending \(reading.replay.count) batch(es) begun before the last stop again"))
        let window = DeliveryWindow(
            committed: anchor, maxInFlight: settings.maxInFlight, policy: settings.policy,
            pausedUntil: restoredPause(cursor.pausedUntil, context: context))
        publish(cursor: anchor, context: context)
        context.status.setDetail("behind", String(max(0, bounds.latest - anchor)))
        context.status.setDetail("deadLetters", String(try await store.deadLetters(follower: name).count))
        return (window, reading)
    }

    /// The receiver's pause committed before the last stop, on this run's monotonic clock; nil
    /// when it has passed (or lies further ahead than any Retry-After is honoured: the wall clock
    /// stepped back since).
    private func restoredPause(_ date: Date?, context: FollowerContext) -> Duration? {
        guard let date else { return nil }
        let left = date.timeIntervalSince(context.clock.now())
        guard left > 0, left <= settings.policy.maximumRetryAfter.seconds else { return nil }
        context.status.setDetail("pausedUntil", RFC3339.string(from: date))
        context.logger.notice("\(receiver.destination) asked for a pause before the last stop: nothing is sent to it before \(RFC3339.string(from: date))")
        return context.clock.uptime() + .milliseconds(Int64((left * 1000).rounded(.up)))
    }

    /// Begins batches while the window has room: first skipping what retention gives up when the
    /// window is empty, then the next batch (``nextBatch(_:timers:group:context:)``).
    private func fill(
        _ window: inout DeliveryWindow, reading: inout LogReading, timers: inout Timers,
        group: inout ThrowingTaskGroup<Event, any Error>, context: FollowerContext
    ) async throws {
        var skipped: [DeliveryWindow.Action] = []
        while window.canBegin {
            if window.isEmpty, reading.replay.isEmpty {
                skipped += try await applyRetention(window: &window, reading: &reading, now: context.clock.uptime(), context: context)
            }
            guard let batch = try await nextBatch(&reading, timers: &timers, group: &group, context: context) else { break }
            let (slot, begun) = window.begin(
                after: batch.after, through: batch.through, count: batch.changes.count, now: context.clock.uptime())
            reading.batches[slot] = batch
            try await carryOut(begun, window: &window, reading: &reading, group: &group, context: context)
        }
        try await carryOut(skipped, window: &window, reading: &reading, group: &group, context: context)
    }

    /// Whether the follower is done: stopping while the receiver fails (the window gave its
    /// batches up; the acknowledged ones after them are remembered), or stopping with everything
    /// the store holds sent.
    private func isDone(_ window: DeliveryWindow, reading: LogReading, context: FollowerContext) async throws -> Bool {
        if window.isFinished {
            try await store.rememberBatches(follower: name, after: window.acknowledgedAhead)
            context.logger.notice(
                "stopping while \(receiver.destination) fails; the changes after anchor \(window.committed) are sent at the next start")
            return true
        }
        guard window.isEmpty, !window.isRetryingDeadLetters, reading.replay.isEmpty, context.stopRequest.isRequested,
            context.storeSettled()
        else { return false }
        guard reading.readFrom >= (try await store.logBounds().latest) else { return false }
        context.logger.info("sent everything the store holds (anchor \(reading.readFrom)); stopping")
        return true
    }

    /// Feeds `event` to the window (and the timers and reading it concerns); returns the
    /// window's actions.
    private func handle(
        _ event: Event, window: inout DeliveryWindow, reading: inout LogReading, timers: inout Timers, context: FollowerContext
    ) async throws -> [DeliveryWindow.Action] {
        let now = context.clock.uptime()
        switch event {
        case .answered(let slot, let outcome):
            return window.answer(slot: slot, outcome: outcome, now: now, random: random())
        case .due:
            timers.wakeAt = nil
            return window.advance(to: now)
        case .stopRequested:
            return window.requestStop(now: now)
        case .woke:
            timers.waiting = false
            return []
        case .tick:
            // Once stopping, no more ticks: the sleep would end at once, over and over.
            timers.ticking = context.stopRequest.isRequested
            return try await tick(window: &window, reading: &reading, now: now, context: context)
        case .intervalDue:
            timers.intervalRunning = false
            reading.intervalPassed()
            return []
        }
    }

    /// The poll tick: the backlog in status, the dead letters marked for retry (when idle), and
    /// retention while batches wait in the window.
    private func tick(
        window: inout DeliveryWindow, reading: inout LogReading, now: Duration, context: FollowerContext
    ) async throws -> [DeliveryWindow.Action] {
        let backlog = try await store.backlog(after: window.committed)
        context.status.setDetail("behind", String(backlog.anchors))
        var actions: [DeliveryWindow.Action] = []
        if window.isEmpty, !window.isRetryingDeadLetters, reading.replay.isEmpty, !context.stopRequest.isRequested,
            !window.isPaused(at: now)
        {
            actions = try await retryDeadLetters(window: &window, reading: &reading, context: context)
        }
        // A receiver that stays down: what it has not acknowledged may outgrow the bounds while
        // batches are in the window. The skip passes them.
        if !window.isEmpty, !context.stopRequest.isRequested {
            actions += try await applyRetention(window: &window, reading: &reading, now: now, context: context)
        }
        return actions
    }
}
