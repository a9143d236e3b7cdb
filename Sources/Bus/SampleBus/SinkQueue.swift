public import GatewayRuntime
public import HealthStore
public import HealthModel
import Synchronization

/// What a full sink queue does with new records.
public enum OverflowPolicy: String, Hashable, Sendable, Codable, CaseIterable {
    /// The publisher waits for room (back-pressure reaches the sources). Nothing is dropped.
    case block
    /// The oldest queued records are dropped to make room, and counted.
    case dropOldest
}

/// A sink's bounded queue settings.
public struct QueueConfiguration: Hashable, Sendable, Codable, DeclaredConfiguration {
    /// The most records the queue holds.
    public var capacity = 10_000
    public var policy = OverflowPolicy.block

    /// The allowed `capacity` in a configuration file.
    public static let capacityRange = 1...10_000_000

    /// Every key at its default.
    public init() {}

    public init(capacity: Int, policy: OverflowPolicy) {
        self.capacity = capacity
        self.policy = policy
    }

    /// A sink's `queue` keys.
    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey("capacity", \.capacity, .whole(capacityRange, unit: "records"), "The most records the sink's queue holds"),
            ConfigurationKey(
                "policy", \.policy, .string(values: OverflowPolicy.allCases.map(\.rawValue)),
                "What a full queue does: block the publishers, or drop the oldest records and count them"),
        ]
    }
}

extension OverflowPolicy: ConfigurationValue {}

/// A bounded FIFO of records between the bus and one sink.
///
/// Thread-safe (a `Mutex`); producers and the single consumer suspend on continuations, never
/// block a thread. Under `.block`, `enqueue` waits for room; under `.dropOldest`, it evicts and
/// counts. A producer keeps waiting for room even when its task is cancelled: a graceful stop
/// cancels the sources while the sinks keep draining, so records already handed to `publish` are
/// delivered, not lost. Only ``finish()`` (the bus ending, or a forced shutdown) releases a waiting
/// producer; what it had not queued by then is discarded.
final class SinkQueue: Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var buffer: [HealthRecord] = []
        var head = 0
        var finished = false
        var dropped = 0
        var enqueued = 0
        /// Records the sink has finished with: handed out, then acknowledged (the sink asked for
        /// its next batch, or acknowledged this one). What the watchdog counts as progress.
        var acknowledged = 0
        /// The consumer, parked until the queue holds `consumerNeeds` records (or finishes).
        var consumer: CheckedContinuation<Void, Never>?
        var consumerNeeds = 1
        var producers: [Waiter] = []
        var nextWaiterID: UInt64 = 0
        /// The batch handed out and not yet acknowledged, for redelivery after a sink restart.
        var inFlight: [HealthRecord] = []
        var inFlightCheckpoints: [SourceCheckpoint] = []
        var redeliver = false
        /// Checkpoints not yet handed out, in publish order, each with the absolute position
        /// (count of records ever enqueued) right after the records published with it: it goes
        /// out with the batch that reaches that position. Bound: one per queued record, plus one
        /// per identity for checkpoints whose records have left the queue (see `coalesceSettled`).
        var checkpoints: [(position: Int, checkpoint: SourceCheckpoint)] = []

        var count: Int { buffer.count - head }
        /// Records queued or handed out and not yet acknowledged.
        var pending: Int { count + inFlight.count }

        /// Counts the batch handed out as done with.
        mutating func acknowledgeInFlight() {
            acknowledged += inFlight.count
            inFlight = []
            inFlightCheckpoints = []
        }
        /// Records ever handed out or evicted: the absolute position of the queue's front.
        var front: Int { enqueued - count }

        /// Queues `checkpoint` behind every record enqueued so far. A pending checkpoint with the
        /// same identity at the same position is replaced: both would go out with the same batch,
        /// and only the newer one counts.
        mutating func append(_ checkpoint: SourceCheckpoint) {
            let position = enqueued
            var index = checkpoints.endIndex
            while index > checkpoints.startIndex, checkpoints[index - 1].position == position {
                index -= 1
                if checkpoints[index].checkpoint.identity == checkpoint.identity {
                    checkpoints.remove(at: index)
                    break
                }
            }
            checkpoints.append((position, checkpoint))
        }

        /// Keeps only the newest checkpoint per identity among those whose records have all left
        /// the queue (evicted by `.dropOldest`): they all go out with the next batch anyway, and
        /// without this a stuck sink under `.dropOldest` would collect them without bound.
        mutating func coalesceSettled() {
            let settled = checkpoints.prefix { $0.position <= front }
            guard settled.count > 1 else { return }
            var seen = Set<SourceCheckpointIdentity>()
            var kept: [(position: Int, checkpoint: SourceCheckpoint)] = []
            for entry in settled.reversed() where seen.insert(entry.checkpoint.identity).inserted {
                kept.append(entry)
            }
            checkpoints.replaceSubrange(0..<settled.count, with: kept.reversed())
        }

        /// Whether a consumer asking for `needs` records can be served now. A pending checkpoint
        /// serves a consumer waiting for any batch (`needs` 1), so that a checkpoint published
        /// without records is committed without waiting for the next record.
        func satisfies(_ needs: Int) -> Bool {
            count >= needs || (needs <= 1 && !checkpoints.isEmpty)
        }

        mutating func compact() {
            if head > 1024, head * 2 > buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
        }
    }

    let configuration: QueueConfiguration
    private let state = Mutex(State())

    init(configuration: QueueConfiguration) {
        self.configuration = configuration
    }

    var droppedCount: Int { state.withLock { $0.dropped } }
    var depth: Int { state.withLock { $0.count } }
    /// The records waiting for the sink (queued or handed out and not acknowledged) and the
    /// records it has acknowledged so far.
    var progress: (pending: Int, acknowledged: Int) { state.withLock { ($0.pending, $0.acknowledged) } }
    /// Producers parked in ``enqueue(_:)`` waiting for room. Internal: lets tests wait for the
    /// state "the publisher is blocked" instead of guessing with a sleep.
    var waitingProducerCount: Int { state.withLock { $0.producers.count } }
    /// Whether the consumer is parked in ``waitForDepth(atLeast:)``. Internal, for tests.
    var isConsumerWaiting: Bool { state.withLock { $0.consumer != nil } }

    /// Adds records, applying the overflow policy. Returns when all are queued, or when the queue
    /// is finished (then the rest is discarded). Cancellation does not cut the wait short; see the
    /// type's documentation.
    /// - Returns: how many queued records this call evicted (`.dropOldest` only), so that the
    ///   caller can add exactly that many to the sink's status.
    /// - Parameter checkpoint: queued right behind the last of `records`, once all of them are
    ///   queued; it goes out with the batch that holds that last record (or, without records,
    ///   with the next batch).
    @discardableResult
    func enqueue(_ records: some Collection<HealthRecord>, checkpoint: SourceCheckpoint? = nil) async -> Int {
        var remaining = records[...]
        var droppedHere = 0
        var checkpoint = checkpoint
        while !remaining.isEmpty || checkpoint != nil {
            let consumer: CheckedContinuation<Void, Never>? = state.withLock { state in
                guard !state.finished else {
                    remaining = remaining.dropFirst(remaining.count)
                    checkpoint = nil
                    return nil
                }
                switch configuration.policy {
                case .dropOldest:
                    for record in remaining {
                        if state.count >= configuration.capacity {
                            state.head += 1
                            state.dropped += 1
                            droppedHere += 1
                        }
                        state.buffer.append(record)
                        state.enqueued += 1
                    }
                    state.compact()
                    remaining = remaining.dropFirst(remaining.count)
                    if droppedHere > 0, !state.checkpoints.isEmpty { state.coalesceSettled() }
                case .block:
                    let room = configuration.capacity - state.count
                    let taken = remaining.prefix(room)
                    state.buffer.append(contentsOf: taken)
                    state.enqueued += taken.count
                    remaining = remaining.dropFirst(taken.count)
                }
                if remaining.isEmpty, let pending = checkpoint {
                    state.append(pending)
                    checkpoint = nil
                }
                // Wake the consumer only once what it waits for is there: a sink filling a batch
                // asks for many records, and waking it for each publish cost CPU for nothing.
                guard state.satisfies(state.consumerNeeds) else { return nil }
                let consumer = state.consumer
                state.consumer = nil
                return consumer
            }
            consumer?.resume()
            if remaining.isEmpty, checkpoint == nil { return droppedHere }
            // Not abandoned on cancellation: a graceful stop cancels the sources, and giving up
            // here would drop records the source has already read from its device.
            await waitForRoom()
        }
        return droppedHere
    }

    private func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.count < configuration.capacity || state.finished { return true }
                state.nextWaiterID += 1
                state.producers.append(Waiter(id: state.nextWaiterID, continuation: continuation))
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Takes up to `maxCount` records, waiting while the queue is empty; checkpoints are not
    /// handed out (for sinks that do not store them, which the bus never sends any).
    func next(maxCount: Int) async -> [HealthRecord]? {
        while let batch = await nextBatch(maxCount: maxCount) {
            if !batch.records.isEmpty { return batch.records }
        }
        return nil
    }

    /// Takes up to `maxCount` records and the checkpoints they complete, waiting while there is
    /// neither. Returns nil once the queue is finished and drained, or as soon as the calling task
    /// is cancelled (forced shutdown). Handing out a batch acknowledges the previous one, unless a
    /// restart asked for redelivery, in which case the unacknowledged batch comes back first.
    func nextBatch(maxCount: Int) async -> SinkBatch? {
        while true {
            // `next` cannot throw, so a cancelled consumer gets the end of the stream: the gateway
            // cancels sinks only when shutdown is forced, and then a sink must stop, not wait for
            // records that may never come.
            if Task.isCancelled { return nil }
            let (batch, producers, mustWait) = state.withLock {
                state -> (SinkBatch?, [Waiter], Bool) in
                if state.redeliver {
                    state.redeliver = false
                    if !state.inFlight.isEmpty || !state.inFlightCheckpoints.isEmpty {
                        return (SinkBatch(records: state.inFlight, checkpoints: state.inFlightCheckpoints), [], false)
                    }
                }
                state.acknowledgeInFlight()
                if state.count > 0 || !state.checkpoints.isEmpty {
                    let end = state.head + min(maxCount, state.count)
                    let batch: [HealthRecord]
                    if state.count == 0 {
                        batch = []
                    } else if end == state.buffer.count {
                        // Taking everything queued (the usual case below full load): move the
                        // buffer out instead of copying each record, then drop the consumed head.
                        var all = state.buffer
                        state.buffer = []
                        all.removeFirst(state.head)
                        batch = all
                        state.head = 0
                    } else {
                        batch = Array(state.buffer[state.head..<end])
                        state.head = end
                        state.compact()
                    }
                    state.inFlight = batch
                    let completed = state.checkpoints.prefix { $0.position <= state.front }
                    state.inFlightCheckpoints = completed.map(\.checkpoint)
                    state.checkpoints.removeFirst(completed.count)
                    let producers = state.producers
                    state.producers = []
                    return (SinkBatch(records: batch, checkpoints: state.inFlightCheckpoints), producers, false)
                }
                if state.finished { return (nil, [], false) }
                return (nil, [], true)
            }
            for producer in producers { producer.continuation.resume() }
            if !mustWait { return batch }
            await waitForDepth(atLeast: 1)
        }
    }

    /// Returns once the queue holds at least `needed` records, or is finished, or the calling
    /// task is cancelled. For the single consumer only. No polling: ``enqueue(_:)`` resumes it.
    func waitForDepth(atLeast needed: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // A full queue is as much as can come: asking for more would leave a blocked
                // producer and this consumer waiting on each other.
                let needs = min(max(1, needed), configuration.capacity)
                let resumeNow = state.withLock { state -> Bool in
                    if state.satisfies(needs) || state.finished || Task.isCancelled { return true }
                    state.consumer = continuation
                    state.consumerNeeds = needs
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            // Without this, a sink idling on an empty queue would never see a forced stop.
            let consumer = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.consumer = nil }
                return state.consumer
            }
            consumer?.resume()
        }
    }

    /// Marks the batch handed out as delivered.
    func acknowledge() {
        state.withLock { $0.acknowledgeInFlight() }
    }

    /// Called by the supervisor before restarting a failed sink: the next `next` returns the
    /// unacknowledged batch again.
    func prepareForRedelivery() {
        state.withLock { $0.redeliver = true }
    }

    /// No more records will come; the consumer drains what is queued, then gets nil.
    func finish() {
        let (consumer, producers) = state.withLock { state in
            state.finished = true
            let result = (state.consumer, state.producers)
            state.consumer = nil
            state.producers = []
            return result
        }
        consumer?.resume()
        for producer in producers { producer.continuation.resume() }
    }
}

/// A sink's view of its queue.
public struct SinkInbox: Sendable {
    let queue: SinkQueue

    /// The next batch of at most `maxCount` records, waiting while none are queued; nil when the
    /// gateway is stopping and the queue is drained, or when the calling task is cancelled (a
    /// forced shutdown). Asking for the next batch acknowledges the previous one.
    public func next(maxCount: Int = 1000) async -> [HealthRecord]? {
        await queue.next(maxCount: maxCount)
    }

    /// Like ``next(maxCount:)``, with the source checkpoints the batch completes: every record
    /// published with a checkpoint is in this batch or an earlier one. For sinks that store
    /// checkpoints (``SampleSink/storesCheckpoints``); a batch may hold checkpoints and no
    /// records. Asking for the next batch acknowledges the previous one.
    public func nextBatch(maxCount: Int = 1000) async -> SinkBatch? {
        await queue.nextBatch(maxCount: maxCount)
    }

    /// Acknowledges the last batch without asking for another (e.g. right after a commit).
    public func acknowledge() {
        queue.acknowledge()
    }

    /// Records waiting in the queue.
    public var depth: Int { queue.depth }

    /// Waits until at least `needed` records are queued, the stream ends, or the calling task is
    /// cancelled (then it returns at once; check `Task.isCancelled`). Lets a batching sink sleep
    /// until its batch is full instead of polling ``depth``.
    public func waitForDepth(atLeast needed: Int) async {
        await queue.waitForDepth(atLeast: needed)
    }
}

extension SinkInbox {
    /// An inbox over a private queue, for driving a sink directly in tests and benchmarks.
    /// Returns the inbox and the closure that feeds it; call `finish` to end the stream.
    public static func standalone(
        configuration: QueueConfiguration = QueueConfiguration()
    ) -> (inbox: SinkInbox, feed: @Sendable ([HealthRecord]) async -> Void, finish: @Sendable () -> Void) {
        let queue = SinkQueue(configuration: configuration)
        return (SinkInbox(queue: queue), { await queue.enqueue($0) }, { queue.finish() })
    }
}

/// What a sink that stores checkpoints takes from its inbox: records, and the checkpoints whose
/// records are all in this batch or an earlier one, in publish order.
public struct SinkBatch: Sendable {
    /// The records, oldest first.
    public var records: [HealthRecord]
    /// The checkpoints this batch completes; store them in the same transaction as `records`.
    public var checkpoints: [SourceCheckpoint]

    /// A batch of `records` completing `checkpoints`.
    public init(records: [HealthRecord], checkpoints: [SourceCheckpoint] = []) {
        self.records = records
        self.checkpoints = checkpoints
    }
}
