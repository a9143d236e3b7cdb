import AsyncPrimitives
import FoundationEssentials
import HealthModel
public import HealthStore
import GatewayRuntime
public import SampleBus
import Synchronization

/// A remote sink's loop over the store's change log: reads the changes after its cursor, sends
/// them through its ``RemoteReceiver`` in batches, and commits its cursor in the store once the
/// receiver acknowledged them. The store is the only log: a crash costs nothing the store
/// committed, and no sink keeps a journal of its own.
///
/// - **Batches** are anchor ranges. Before a range is first sent it is committed in the store
///   (`follower_batches`), so a batch sent again after a crash is rebuilt from the same range,
///   as the same request (``FollowerBatch``). A batch smaller than `batchSize` waits up to
///   `batchInterval` for more changes.
/// - **In flight**: up to `maxInFlight` batches wait for their answers at once; the cursor moves
///   only past the oldest unanswered one, so a crash resends at most those.
/// - **Failures**: a retryable outcome is retried with backoff (``DeliveryPolicy``); a batch the
///   receiver refuses is split in halves until the one refused change is found, which is stored
///   as a dead letter (`healthgate dead-letters`) and passed over. Letters the operator marks for
///   retry are sent again when the follower is idle.
/// - **Retention**: a follower whose unacknowledged changes exceed `follow.maxBytes` or
///   `follow.maxAgeSeconds` skips the oldest whole transactions (counted in status as `skipped`,
///   logged once per episode). A cursor above the store's latest anchor (the store was replaced)
///   starts again at 0; one below the tombstones kept resumes at the oldest change kept.
/// - **Stopping**: once a stop is requested, backoffs end at once (what was not sent stays in the
///   store and is sent at the next start); otherwise the follower keeps sending until every sink
///   drained into the store and it reached the store's latest anchor.
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

    /// What became of a batch.
    enum BatchResult: Sendable {
        /// Delivered (or its refused changes dead-lettered): the cursor may pass it.
        case done(records: Int)
        /// Given up because the gateway is stopping: the cursor stays before it.
        case stopped
    }

    private enum Event: Sendable {
        case finished(sequence: Int, BatchResult)
        /// A commit after the read position, or the poll interval passed.
        case woke
        /// The poll interval passed: time for retention and dead-letter retries.
        case tick
        /// A partial batch waited its interval.
        case intervalDue
    }

    /// A batch begun and not yet acknowledged.
    private struct Slot {
        var sequence: Int
        var through: Int64
        var result: BatchResult?
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

    private func follow(context: FollowerContext) async throws {
        let log = context.logger
        var cursor = try await store.registerFollower(name, startingAt: settings.follow.startFrom)
        if let legacyOutbox {
            if try await LegacyOutbox.importIfPresent(path: legacyOutbox, into: store, follower: name, logger: log) {
                cursor = try await store.follower(name) ?? cursor
            }
        }
        var readFrom = cursor.anchor
        let bounds = try await store.logBounds()
        if readFrom > bounds.latest {
            log.warning(
                "the cursor \(readFrom) is above the store's latest anchor \(bounds.latest): the store was replaced; "
                    + "sending its log again from the start")
            try await store.skip(follower: name, to: 0, count: 0)
            readFrom = 0
        }
        var replay = try await store.followerBatches(name).filter { $0.through > readFrom }
        log.info(
            "following the store from anchor \(readFrom) (latest \(bounds.latest)) to \(receiver.destination)"
                + (replay.isEmpty ? "" : "; sending \(replay.count) batch(es) begun before the last stop again"))
        publish(cursor: readFrom, context: context)
        context.status.setDetail("behind", String(max(0, bounds.latest - readFrom)))
        context.status.setDetail("deadLetters", String(try await store.deadLetters(follower: name).count))

        var window: [Slot] = []
        var sequence = 0
        var waiting = false
        var ticking = false
        var intervalRunning = false
        var partialDue = false
        var partialAfter: Int64?
        var stopping = false
        var skipEpisode = false
        // The cursor as committed in the store.
        var committed = readFrom
        // Batches at or below it were skipped by retention: their tasks give up.
        let skipped = SkipMark()
        // The greatest anchor seen in the store: the waiter waits for commits above it, not
        // above the read position (a partial batch waiting its interval lies between the two).
        var seen = readFrom
        try await withThrowingTaskGroup(of: Event.self) { group in
            defer { group.cancelAll() }
            while true {
                try Task.checkCancellation()
                // Fill the window.
                while !stopping, window.count < settings.maxInFlight {
                    if window.isEmpty, replay.isEmpty {
                        if let target = try await applyRetention(from: committed, episode: &skipEpisode, context: context) {
                            committed = target
                            readFrom = max(readFrom, target)
                            publish(cursor: target, context: context)
                        }
                    }
                    let next: FollowerBatch?
                    if let range = replay.first {
                        replay.removeFirst()
                        next = try await rebuild(after: range.after, through: range.through, context: context)
                    } else {
                        let read = try await readBatch(
                            after: &readFrom, partialDue: partialDue, stopping: context.stopRequest.isRequested, context: context)
                        switch read {
                        case .batch(let batch):
                            partialDue = false
                            partialAfter = nil
                            next = batch
                        case .partial(let latest):
                            seen = max(seen, latest)
                            if partialAfter != readFrom {
                                partialAfter = readFrom
                                if !intervalRunning {
                                    intervalRunning = true
                                    let interval = settings.batchInterval
                                    group.addTask {
                                        try await context.clock.sleep(for: interval)
                                        return .intervalDue
                                    }
                                }
                            }
                            next = nil
                        case .nothing:
                            next = nil
                        }
                    }
                    guard let batch = next else { break }
                    readFrom = batch.through
                    let slot = sequence
                    sequence += 1
                    if batch.changes.isEmpty {
                        // Nothing the receiver carries: passed at once.
                        window.append(Slot(sequence: slot, through: batch.through, result: .done(records: 0)))
                        continue
                    }
                    window.append(Slot(sequence: slot, through: batch.through))
                    group.addTask { .finished(sequence: slot, try await deliver(batch, skipped: skipped, context: context)) }
                }
                // Acknowledge the finished prefix of the window.
                var acknowledged: Int64?
                var records = 0
                while let first = window.first, let result = first.result {
                    window.removeFirst()
                    switch result {
                    case .done(let count):
                        acknowledged = first.through
                        records += count
                    case .stopped:
                        stopping = true
                    }
                    if stopping { break }
                }
                if let acknowledged, acknowledged > committed {
                    try await store.acknowledge(follower: name, through: acknowledged)
                    committed = acknowledged
                    if records > 0 { context.status.recordsHandled(records, lastDate: nil) }
                    publish(cursor: acknowledged, context: context)
                }
                if stopping, window.allSatisfy({ $0.result != nil }) {
                    log.notice("stopping while \(receiver.destination) fails; the changes after anchor \(acknowledged ?? readFrom) are sent at the next start")
                    return
                }
                if window.isEmpty, replay.isEmpty, context.stopRequest.isRequested, context.storeSettled() {
                    let latest = try await store.logBounds().latest
                    if readFrom >= latest {
                        log.info("sent everything the store holds (anchor \(readFrom)); stopping")
                        return
                    }
                }
                if !ticking {
                    ticking = true
                    let poll = Self.pollInterval
                    group.addTask {
                        _ = try await context.stopRequest.sleep(for: poll, on: context.clock)
                        return .tick
                    }
                }
                if !waiting, window.count < settings.maxInFlight {
                    waiting = true
                    let after = max(readFrom, seen)
                    let poll = context.stopRequest.isRequested ? Self.stoppingPollInterval : Self.pollInterval
                    group.addTask { [store] in
                        // A stop request wakes it too: the follower then finishes what it can.
                        try await store.waitForCommit(after: after) { _ = try await context.stopRequest.sleep(for: poll, on: context.clock) }
                        return .woke
                    }
                }
                guard let event = try await group.next() else { continue }
                switch event {
                case .finished(let finished, let result):
                    if let index = window.firstIndex(where: { $0.sequence == finished }) {
                        window[index].result = result
                    }
                case .woke:
                    waiting = false
                case .tick:
                    // Once stopping, no more ticks: the sleep would end at once, over and over.
                    ticking = context.stopRequest.isRequested
                    let backlog = try await store.backlog(after: committed)
                    context.status.setDetail("behind", String(backlog.anchors))
                    if window.isEmpty, replay.isEmpty, !context.stopRequest.isRequested {
                        try await retryDeadLetters(context: context)
                    }
                    // A receiver that stays down: what it has not acknowledged may outgrow the
                    // bounds while batches are in flight. Those the skip passes give up.
                    if !window.isEmpty, !context.stopRequest.isRequested,
                        let target = try await applyRetention(from: committed, episode: &skipEpisode, context: context)
                    {
                        committed = target
                        skipped.raise(to: target)
                        for index in window.indices where window[index].through <= target && window[index].result == nil {
                            window[index].result = .done(records: 0)
                        }
                        replay.removeAll { $0.through <= target }
                        readFrom = max(readFrom, target)
                        publish(cursor: target, context: context)
                    }
                case .intervalDue:
                    intervalRunning = false
                    if partialAfter == readFrom { partialDue = true }
                }
            }
        }
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
            return .batch(FollowerBatch(after: anchor, through: page.anchor, changes: []))
        }
        if !page.hasMore, count < self.settings.batchSize, self.settings.batchInterval > .zero, !partialDue, !stopping {
            return .partial(latest: page.anchor)
        }
        try await store.beginBatch(follower: name, after: anchor, through: page.anchor)
        return .batch(FollowerBatch(after: anchor, through: page.anchor, changes: FollowedChange.changes(of: page).filter(receiver.accepts)))
    }

    /// The changes after `anchor`, at most a batch.
    private func readPage(after anchor: Int64) async -> Result<StoreChanges, StoreError> {
        do {
            return .success(try await store.changes(since: anchor, limit: settings.batchSize, includingCorrelationMembers: false))
        } catch {
            return .failure(error)
        }
    }

    /// The batch of the range (`after`, `through`], begun before a stop or crash, from what the
    /// store holds in it now.
    private func rebuild(after: Int64, through: Int64, context: FollowerContext) async throws -> FollowerBatch {
        let span = max(1, Int(clamping: through - after))
        let page = try await store.changes(since: after, limit: span, includingCorrelationMembers: false)
        let changes = FollowedChange.changes(of: page).filter { $0.anchor <= through && receiver.accepts($0) }
        return FollowerBatch(after: after, through: through, changes: changes)
    }

    /// Sends `batch` until the receiver has it, splitting it when the receiver refuses it and
    /// dead-lettering a change refused alone; `.stopped` when a stop ends a backoff.
    func deliver(_ batch: FollowerBatch, skipped: SkipMark = SkipMark(), context: FollowerContext) async throws -> BatchResult {
        var stack = [batch]
        var records = 0
        while let current = stack.popLast() {
            var attempt = 0
            attempts: while true {
                try Task.checkCancellation()
                // Retention skipped past it while it waited: nothing left to send.
                if batch.through > 0, batch.through <= skipped.value { return .done(records: 0) }
                attempt += 1
                let outcome = await receiver.send(current, context: context)
                let decision = settings.policy.decision(
                    for: outcome, batchCount: current.changes.count, attempt: attempt,
                    stopping: context.stopRequest.isRequested, random: random())
                switch decision {
                case .acknowledge:
                    records += current.changes.count
                    if attempt > 1 {
                        context.logger.info("\(receiver.destination) has the batch after \(attempt) attempts")
                        context.status.clearError()
                    }
                    break attempts
                case .deadLetter(let status, let answer):
                    try await deadLetter(current.changes, status: status, answer: answer, context: context)
                    break attempts
                case .bisect(let status, _):
                    context.logger.warning(
                        "\(receiver.destination) refused a batch of \(current.changes.count) with status \(status); "
                            + "splitting it to find the refused change")
                    let (first, second) = current.halves()
                    stack.append(second)
                    stack.append(first)
                    break attempts
                case .retry(let delay, let reason, let fromServer):
                    context.logger.warning(
                        "sending \(current.changes.count) change(s) to \(receiver.destination) failed (\(reason)); "
                            + "retry \(attempt) in \(ConfigurationDecoder.format(delay.seconds)) s" + (fromServer ? " (Retry-After)" : ""))
                    context.status.reportError(
                        "delivery failed: \(reason); retrying in \(ConfigurationDecoder.format(delay.seconds)) s", at: context.clock.now())
                    guard try await context.stopRequest.sleep(for: delay, on: context.clock) == .elapsed else { return .stopped }
                case .reauthenticate(let delay, let status):
                    let message = "authentication failed (\(status)) at \(receiver.destination); the changes wait in the store, "
                        + "retrying in \(ConfigurationDecoder.format(delay.seconds)) s"
                    context.logger.error(message)
                    context.status.reportError(message, at: context.clock.now())
                    guard try await context.stopRequest.sleep(for: delay, on: context.clock) == .elapsed else { return .stopped }
                case .stop(let reason):
                    context.status.reportError("delivery failed: \(reason); stopping", at: context.clock.now())
                    return .stopped
                }
            }
        }
        return .done(records: records)
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

    /// Sends the dead letters marked for retry; removes those the receiver now accepts.
    private func retryDeadLetters(context: FollowerContext) async throws {
        let letters = try await store.deadLetters(follower: name, retryOnly: true)
        guard !letters.isEmpty else { return }
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
        guard !changes.isEmpty else { return }
        context.logger.info("sending \(changes.count) dead letter(s) again, as asked")
        let batch = FollowerBatch(after: 0, through: 0, changes: changes)
        if case .done = try await deliver(batch, context: context) {
            try await store.removeDeadLetters(rows)
            context.status.setDetail("deadLetters", String(try await store.deadLetters(follower: name).count))
        }
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
                "\(receiver.destination) is too far behind: skipping \(skip.count) change(s) (anchors \(anchor + 1)…\(skip.anchor)) "
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

/// The anchor through which retention skipped a follower's changes, read by its batch tasks.
final class SkipMark: Sendable {
    private let anchor = Mutex<Int64>(0)

    var value: Int64 { anchor.withLock { $0 } }

    func raise(to target: Int64) {
        anchor.withLock { $0 = max($0, target) }
    }
}
