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
///   that were acknowledged. Without failures it keeps sending until every sink drained into the
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

    private enum Event: Sendable {
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

    /// The driver around ``DeliveryWindow``: reads batches into it, carries out its actions
    /// (sends, dead letters, cursor commits) and feeds it events (answers, time, the stop). Its
    /// own state is what reading the log needs (``LogReading``) and which timers run.
    private func follow(context: FollowerContext) async throws {
        let log = context.logger
        var cursor = try await store.registerFollower(name, startingAt: settings.follow.startFrom)
        if let legacyOutbox {
            if try await LegacyOutbox.importIfPresent(path: legacyOutbox, into: store, follower: name, logger: log) {
                cursor = try await store.follower(name) ?? cursor
            }
        }
        var reading = LogReading(from: cursor.anchor)
        let bounds = try await store.logBounds()
        if reading.readFrom > bounds.latest {
            log.warning(
                "the cursor \(reading.readFrom) is above the store's latest anchor \(bounds.latest): the store was replaced; "
                    + "sending its log again from the start")
            try await store.skip(follower: name, to: 0, count: 0)
            reading = LogReading(from: 0)
        }
        reading.replay = try await store.followerBatches(name).filter { $0.through > reading.readFrom }
        log.info(
            "following the store from anchor \(reading.readFrom) (latest \(bounds.latest)) to \(receiver.destination)"
                + (reading.replay.isEmpty ? "" : "; sending \(reading.replay.count) batch(es) begun before the last stop again"))
        var window = DeliveryWindow(
            committed: reading.readFrom, maxInFlight: settings.maxInFlight, policy: settings.policy,
            pausedUntil: restoredPause(cursor.pausedUntil, context: context))
        publish(cursor: reading.readFrom, context: context)
        context.status.setDetail("behind", String(max(0, bounds.latest - reading.readFrom)))
        context.status.setDetail("deadLetters", String(try await store.deadLetters(follower: name).count))

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
                actions = []
                // Fill the window.
                while window.canBegin {
                    if window.isEmpty, reading.replay.isEmpty,
                        let target = try await applyRetention(from: window.committed, episode: &reading.skipEpisode, context: context)
                    {
                        actions += window.skip(through: target, now: context.clock.uptime())
                        reading.passed(target)
                        publish(cursor: target, context: context)
                    }
                    guard let batch = try await nextBatch(&reading, timers: &timers, group: &group, context: context) else { break }
                    let (slot, begun) = window.begin(
                        after: batch.after, through: batch.through, count: batch.changes.count, now: context.clock.uptime())
                    reading.batches[slot] = batch
                    try await carryOut(begun, window: &window, reading: &reading, group: &group, context: context)
                }
                try await carryOut(actions, window: &window, reading: &reading, group: &group, context: context)
                actions = []
                if window.isFinished {
                    try await store.rememberBatches(follower: name, after: window.acknowledgedAhead)
                    log.notice(
                        "stopping while \(receiver.destination) fails; the changes after anchor \(window.committed) are sent at the next start")
                    return
                }
                if window.isEmpty, !window.isRetryingDeadLetters, reading.replay.isEmpty, context.stopRequest.isRequested,
                    context.storeSettled()
                {
                    let latest = try await store.logBounds().latest
                    if reading.readFrom >= latest {
                        log.info("sent everything the store holds (anchor \(reading.readFrom)); stopping")
                        return
                    }
                }
                schedule(&timers, window: window, reading: reading, group: &group, context: context)
                guard let event = try await group.next() else { continue }
                let now = context.clock.uptime()
                switch event {
                case .answered(let slot, let outcome):
                    actions = window.answer(slot: slot, outcome: outcome, now: now, random: random())
                case .due:
                    timers.wakeAt = nil
                    actions = window.advance(to: now)
                case .stopRequested:
                    actions = window.requestStop(now: now)
                case .woke:
                    timers.waiting = false
                case .tick:
                    // Once stopping, no more ticks: the sleep would end at once, over and over.
                    timers.ticking = context.stopRequest.isRequested
                    let backlog = try await store.backlog(after: window.committed)
                    context.status.setDetail("behind", String(backlog.anchors))
                    if window.isEmpty, !window.isRetryingDeadLetters, reading.replay.isEmpty, !context.stopRequest.isRequested,
                        !window.isPaused(at: now)
                    {
                        actions = try await retryDeadLetters(window: &window, reading: &reading, context: context)
                    }
                    // A receiver that stays down: what it has not acknowledged may outgrow the
                    // bounds while batches are in the window. The skip passes them.
                    if !window.isEmpty, !context.stopRequest.isRequested,
                        let target = try await applyRetention(from: window.committed, episode: &reading.skipEpisode, context: context)
                    {
                        actions += window.skip(through: target, now: now)
                        reading.passed(target)
                        publish(cursor: target, context: context)
                    }
                case .intervalDue:
                    timers.intervalRunning = false
                    if reading.partialAfter == reading.readFrom { reading.partialDue = true }
                }
            }
        }
    }

    /// What the driver knows of the log beyond the window: where reading goes on, the batches
    /// begun before the last stop still to send, the batches of the window by slot, and the
    /// state of a partial batch waiting for its interval.
    private struct LogReading {
        var readFrom: Int64
        /// The greatest anchor seen in the store: the waiter waits for commits above it, not
        /// above the read position (a partial batch waiting its interval lies between the two).
        var seen: Int64
        var replay: [BegunBatch] = []
        var batches: [Int: FollowerBatch] = [:]
        /// The dead letters being sent again (their rows), while the window sends them.
        var deadLetterRows: [Int64] = []
        var partialAfter: Int64?
        var partialDue = false
        var skipEpisode = false

        init(from anchor: Int64) {
            readFrom = anchor
            seen = anchor
        }

        /// Retention moved the cursor to `target`: reading goes on from there.
        mutating func passed(_ target: Int64) {
            readFrom = max(readFrom, target)
            replay.removeAll { $0.through <= target }
            batches = batches.filter { $0.value.through > target || $0.value.through == 0 }
        }
    }

    /// Which of the driver's timers are running (each is a child task that ends with an event).
    private struct Timers {
        var waiting = false
        var ticking = false
        var intervalRunning = false
        /// When the `.due` timer running ends, if one is.
        var wakeAt: Duration?
    }

    /// The next batch to begin: the oldest range begun before the last stop (empty when the
    /// receiver acknowledged it then), else the next range of the log (its range and key
    /// committed first); nil when there is none yet.
    private func nextBatch(
        _ reading: inout LogReading, timers: inout Timers, group: inout ThrowingTaskGroup<Event, any Error>, context: FollowerContext
    ) async throws -> FollowerBatch? {
        if !reading.replay.isEmpty {
            let begun = reading.replay.removeFirst()
            reading.readFrom = max(reading.readFrom, begun.through)
            if begun.acknowledged {
                // The receiver has it: nothing to send, the cursor may pass it in turn.
                return batch(after: begun.after, through: begun.through, changes: [])
            }
            return try await rebuild(begun, context: context)
        }
        let read = try await readBatch(
            after: &reading.readFrom, partialDue: reading.partialDue, stopping: context.stopRequest.isRequested, context: context)
        switch read {
        case .batch(let batch):
            reading.partialDue = false
            reading.partialAfter = nil
            reading.readFrom = batch.through
            return batch
        case .partial(let latest):
            reading.seen = max(reading.seen, latest)
            if reading.partialAfter != reading.readFrom {
                reading.partialAfter = reading.readFrom
                if !timers.intervalRunning {
                    timers.intervalRunning = true
                    let interval = settings.batchInterval
                    group.addTask {
                        try await context.clock.sleep(for: interval)
                        return .intervalDue
                    }
                }
            }
            return nil
        case .nothing:
            return nil
        }
    }

    /// Starts the timers the window and the log need: the poll tick, the waiter for new commits
    /// (while the window has room), and the wake-up of the earliest waiting part.
    private func schedule(
        _ timers: inout Timers, window: DeliveryWindow, reading: LogReading, group: inout ThrowingTaskGroup<Event, any Error>,
        context: FollowerContext
    ) {
        if !timers.ticking {
            timers.ticking = true
            let poll = Self.pollInterval
            group.addTask {
                _ = try await context.stopRequest.sleep(for: poll, on: context.clock)
                return .tick
            }
        }
        if !timers.waiting, window.canBegin {
            timers.waiting = true
            let after = max(reading.readFrom, reading.seen)
            let poll = context.stopRequest.isRequested ? Self.stoppingPollInterval : Self.pollInterval
            group.addTask { [store] in
                // A stop request wakes it too: the follower then finishes what it can.
                try await store.waitForCommit(after: after) { _ = try await context.stopRequest.sleep(for: poll, on: context.clock) }
                return .woke
            }
        }
        if let due = window.nextWake, timers.wakeAt.map({ due < $0 }) ?? true {
            timers.wakeAt = due
            let delay = due - context.clock.uptime()
            group.addTask {
                if delay > .zero { try await context.clock.sleep(for: delay) }
                return .due
            }
        }
    }

    /// Carries out the window's actions, and those that follow from them (a dead letter stored
    /// lets the batch go on).
    private func carryOut(
        _ actions: [DeliveryWindow.Action], window: inout DeliveryWindow, reading: inout LogReading,
        group: inout ThrowingTaskGroup<Event, any Error>, context: FollowerContext
    ) async throws {
        var pending = actions[...]
        while let action = pending.popFirst() {
            let log = context.logger
            switch action {
            case .send(let slot, let part, _):
                guard let batch = reading.batches[slot] else { continue }
                let request = batch.part(part)
                group.addTask { .answered(slot: slot, await receiver.send(request, context: context)) }
            case .deadLetter(let slot, let part, let status, let answer):
                if let batch = reading.batches[slot] {
                    try await deadLetter(Array(batch.changes[part]), status: status, answer: answer, context: context)
                }
                pending += window.deadLettered(slot: slot, now: context.clock.uptime())
            case .commit(let through, let records):
                try await store.acknowledge(follower: name, through: through)
                reading.batches = reading.batches.filter { $0.value.through > through || $0.value.through == 0 }
                if records > 0 { context.status.recordsHandled(records, lastDate: nil) }
                publish(cursor: through, context: context)
            case .pause(let until):
                let date = context.clock.now().addingTimeInterval((until - context.clock.uptime()).seconds)
                try await store.pause(follower: name, until: date)
                context.status.setDetail("pausedUntil", RFC3339.string(from: date))
                log.notice("\(receiver.destination) asked for a pause (Retry-After): nothing is sent to it before \(RFC3339.string(from: date))")
            case .resume:
                context.status.setDetail("pausedUntil", nil)
            case .retrying(_, let count, let attempt, let delay, let reason, let fromServer):
                log.warning(
                    "sending \(String(count: count, "change")) to \(receiver.destination) failed (\(reason)); "
                        + "retry \(attempt) in \(ConfigurationDecoder.format(delay.seconds)) s" + (fromServer ? " (Retry-After)" : ""))
                context.status.reportError(
                    "delivery failed: \(reason); retrying in \(ConfigurationDecoder.format(delay.seconds)) s", at: context.clock.now())
            case .reauthenticating(_, let delay, let status):
                let message = "authentication failed (\(status)) at \(receiver.destination); the changes wait in the store, "
                    + "retrying in \(ConfigurationDecoder.format(delay.seconds)) s"
                log.error(message)
                context.status.reportError(message, at: context.clock.now())
            case .splitting(_, let count, let status):
                log.warning(
                    "\(receiver.destination) refused a batch of \(count) with status \(status); splitting it to find the refused change")
            case .recovered(_, let attempts):
                log.info("\(receiver.destination) has the batch after \(attempts) attempts")
                context.status.clearError()
            case .abandoned(_, let reason):
                context.status.reportError("delivery failed: \(reason); stopping", at: context.clock.now())
            }
        }
        if let delivered = window.finishDeadLetterRetry() {
            if delivered {
                try await store.removeDeadLetters(reading.deadLetterRows)
                context.status.setDetail("deadLetters", String(try await store.deadLetters(follower: name).count))
            }
            reading.deadLetterRows = []
        }
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

    private enum Read {
        case batch(FollowerBatch)
        /// Fewer changes than a batch, younger than the interval: wait. `latest` is the store's
        /// latest anchor at the read.
        case partial(latest: Int64)
        case nothing
    }

    /// The next batch after `anchor`, its range committed; `.partial` when the changes after it
    /// do not fill a batch and have not waited their interval yet.
    private func readBatch(
        after anchor: inout Int64, partialDue: Bool, stopping: Bool, context: FollowerContext
    ) async throws -> Read {
        let page: StoreChanges
        switch await readPage(after: anchor) {
        case .success(let read):
            page = read
        case .failure(let error) where error.code == .unknownAnchor:
            context.logger.warning("the cursor \(anchor) is not in the store's log (the store was replaced); starting again at 0")
            try await store.skip(follower: name, to: 0, count: 0)
            anchor = 0
            return .nothing
        case .failure(let error) where error.code == .anchorExpired:
            let purged = try await store.logBounds().purgedThrough
            context.logger.warning(
                "the store no longer holds the deletions between anchor \(anchor) and \(purged); they are not sent. "
                    + "Resuming at the oldest change kept")
            context.status.reportError("deletions before anchor \(purged) were purged before they were sent")
            try await store.skip(follower: name, to: purged, count: 0)
            anchor = purged
            return .nothing
        case .failure(let error):
            throw error
        }
        let count = page.added.count + page.deleted.count
        if count == 0 {
            guard page.anchor > anchor else { return .nothing }
            // Anchors with nothing left at them (objects moved on or pruned): passed over.
            return .batch(batch(after: anchor, through: page.anchor, changes: []))
        }
        if !page.hasMore, count < self.settings.batchSize, self.settings.batchInterval > .zero, !partialDue, !stopping {
            return .partial(latest: page.anchor)
        }
        let batch = self.batch(after: anchor, through: page.anchor, changes: FollowedChange.changes(of: page).filter(receiver.accepts))
        try await store.beginBatch(follower: name, after: anchor, through: page.anchor, key: batch.key)
        return .batch(batch)
    }

    /// The changes after `anchor`, at most a batch.
    private func readPage(after anchor: Int64) async -> Result<StoreChanges, StoreError> {
        do {
            return .success(try await store.changes(since: anchor, limit: settings.batchSize, includingCorrelationMembers: false))
        } catch {
            return .failure(error)
        }
    }

    /// The batch of a range begun before a stop or crash, from what the store holds in it now,
    /// under the key of what it carries now: the key it was sent under when nothing in it moved
    /// on and the receiver's settings are the same, another one otherwise (committed with the
    /// range, and logged).
    private func rebuild(_ begun: BegunBatch, context: FollowerContext) async throws -> FollowerBatch {
        let span = max(1, Int(clamping: begun.through - begun.after))
        let page = try await store.changes(since: begun.after, limit: span, includingCorrelationMembers: false)
        let changes = FollowedChange.changes(of: page).filter { $0.anchor <= begun.through && receiver.accepts($0) }
        let rebuilt = batch(after: begun.after, through: begun.through, changes: changes)
        if let key = begun.key, key != rebuilt.key {
            try await store.beginBatch(follower: name, after: begun.after, through: begun.through, key: rebuilt.key)
            context.logger.info(
                "the batch of anchors \(begun.after + 1)…\(begun.through) begun before the last stop is sent under a new key, "
                    + "\(rebuilt.key) (it was \(key)): an object in it moved on to a later version since, or the sink's settings changed")
        }
        return rebuilt
    }

    /// A batch of `changes` for this follower's receiver (its key names its payload, ``BatchKey``).
    private func batch(after: Int64, through: Int64, changes: [FollowedChange]) -> FollowerBatch {
        FollowerBatch(after: after, through: through, changes: changes, payloadIdentity: receiver.payloadIdentity)
    }

    /// Stores `changes` (one, refused alone) as dead letters and reports it.
    private func deadLetter(_ changes: [FollowedChange], status: Int, answer: String, context: FollowerContext) async throws {
        let now = context.clock.now()
        let encoder = HealthJSON.makeEncoder()
        let letters = changes.map { change in
            var payload: [UInt8]?
            if case .stored(let record, _) = change { payload = try? HealthJSONPayload.encode(record, encoder: encoder) }
            return DeadLetter(
                follower: name, id: change.id, kind: change.kind, type: change.typeIdentifier, isDeletion: change.isDeletion,
                anchor: change.anchor, payload: payload, status: status, response: answer, failedAt: now)
        }
        try await store.addDeadLetters(letters)
        let what = changes.map { "\($0.isDeletion ? "the deletion of " : "")\($0.id)" }.joined(separator: ", ")
        context.logger.error(
            "\(receiver.destination) refused \(what) with status \(status): \(answer.prefix(200)); kept as a dead letter",
            device: changes.first.flatMap { change in
                if case .stored(let record, _) = change { return record.device?.displayName }
                return nil
            })
        context.status.reportError("\(what) refused with status \(status); see 'healthgate dead-letters list'", at: now)
        context.status.setDetail("deadLetters", String(try await store.deadLetters(follower: name).count))
    }

    /// Begins sending the dead letters marked for retry, as a batch of the window apart from the
    /// cursor; once the receiver has them (or refused some again, stored anew) their rows are
    /// removed (``carryOut(_:window:reading:group:context:)``).
    private func retryDeadLetters(window: inout DeliveryWindow, reading: inout LogReading, context: FollowerContext) async throws
        -> [DeliveryWindow.Action]
    {
        let letters = try await store.deadLetters(follower: name, retryOnly: true)
        guard !letters.isEmpty else { return [] }
        let decoder = HealthJSON.makeDecoder()
        var changes: [FollowedChange] = []
        var rows: [Int64] = []
        for letter in letters {
            if letter.isDeletion {
                changes.append(.deleted(StoreChanges.Deletion(id: letter.id, kind: letter.kind, type: letter.type, anchor: letter.anchor)))
            } else if let payload = letter.payload, let record = try? HealthJSONPayload.decode(payload, kind: letter.kind, decoder: decoder) {
                changes.append(.stored(record, anchor: letter.anchor))
            } else {
                context.logger.error("the dead letter \(letter.id) cannot be read back; it stays")
                continue
            }
            rows.append(letter.rowID)
        }
        guard !changes.isEmpty else { return [] }
        context.logger.info("sending \(String(count: changes.count, "dead letter")) again, as asked")
        let (slot, actions) = window.beginDeadLetterRetry(count: changes.count, now: context.clock.uptime())
        reading.batches[slot] = batch(after: 0, through: 0, changes: changes)
        reading.deadLetterRows = rows
        return actions
    }

    /// Skips the oldest changes when what the follower has not acknowledged (its committed
    /// cursor `anchor`) exceeds its bounds; returns the new committed cursor, or nil.
    private func applyRetention(from anchor: Int64, episode: inout Bool, context: FollowerContext) async throws -> Int64? {
        let follow = settings.follow
        // Ages are measured on the store's clock, the one that dated the commits.
        guard let skip = try await store.retentionSkip(
            after: anchor, maxBytes: follow.maxBytes, maxAgeSeconds: follow.maxAgeSeconds)
        else {
            // Within its bounds again: the episode is over.
            episode = false
            return nil
        }
        try await store.skip(follower: name, to: skip.anchor, count: skip.count)
        context.status.recordsDropped(Int(clamping: skip.count))
        if !episode {
            episode = true
            context.logger.warning(
                "\(receiver.destination) is too far behind: skipping \(String(count: skip.count, "change")) (anchors \(anchor + 1)…\(skip.anchor)) "
                    + "beyond follow.maxBytes \(follow.maxBytes) / follow.maxAgeSeconds \(ConfigurationDecoder.format(follow.maxAgeSeconds)); "
                    + "it never gets them. Logged once until it catches up")
        }
        return skip.anchor
    }

    /// The follower's status details: its cursor and what it has left to send.
    private func publish(cursor: Int64, context: FollowerContext) {
        context.status.setDetail("cursor", String(cursor))
        context.status.setDetail("destination", receiver.destination)
    }
}
