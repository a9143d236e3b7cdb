public import HealthStore
public import FoundationEssentials
public import HealthModel
import Synchronization

/// Fans published records out to every subscribed sink's bounded queue.
///
/// Sinks are subscribed when the bus is made, before any source can publish, so no early record
/// is missed. `publish` returns once every interested queue accepted the records; with a `.block`
/// queue that may mean waiting for the slowest sink (stated back-pressure).
public final class SampleBus: Sendable {
    /// One sink's subscription.
    public struct Subscription: Sendable {
        public let name: String
        let queue: SinkQueue
        let accepts: @Sendable (HealthRecord) -> Bool
        let status: StatusReporter?
        /// Whether checkpoints published with records are queued for this sink.
        public let storesCheckpoints: Bool

        /// The inbox the sink reads.
        public var inbox: SinkInbox { SinkInbox(queue: queue) }
        /// Records dropped by the overflow policy.
        public var droppedCount: Int { queue.droppedCount }
    }

    public let subscriptions: [Subscription]
    /// What sources read their checkpoints from: the newest published here, else the durable
    /// sink's (see ``CheckpointLedger``).
    public let checkpoints: CheckpointLedger
    /// What keeps a wearer's heart rate from arriving twice by two paths; nil: every record goes
    /// on as published. Sources' publishers run their records through it.
    public let arbiter: HeartRateArbiter?

    /// Creates a bus with its sinks' queues.
    /// - Parameters:
    ///   - sinks: name, queue settings, the record filter, and the status entry to which drops
    ///     are reported.
    ///   - storesCheckpoints: by position in `sinks`, whether that sink stores checkpoints (missing
    ///     entries: no). Only those sinks' queues carry checkpoints.
    ///   - checkpoints: the ledger sources read from; by default one without durable storage.
    ///   - arbiter: the heart-rate paths' arbiter (``HeartRateArbiter``); nil: none.
    public init(
        sinks: [(name: String, queue: QueueConfiguration, accepts: @Sendable (HealthRecord) -> Bool, status: StatusReporter?)],
        storesCheckpoints: [Bool] = [], checkpoints: CheckpointLedger = CheckpointLedger(durable: nil),
        arbiter: HeartRateArbiter? = nil
    ) {
        self.arbiter = arbiter
        subscriptions = sinks.enumerated().map { index, sink in
            Subscription(
                name: sink.name, queue: SinkQueue(configuration: sink.queue), accepts: sink.accepts,
                status: sink.status, storesCheckpoints: index < storesCheckpoints.count && storesCheckpoints[index])
        }
        self.checkpoints = checkpoints
    }

    /// Offers records to every sink that accepts them.
    public func publish(_ records: [HealthRecord]) async {
        guard !records.isEmpty else { return }
        await publish(records, checkpoint: nil)
    }

    /// Offers records to every sink that accepts them, and `checkpoint` to every sink that stores
    /// checkpoints, queued right behind the records (so it is committed with them, never before).
    /// The checkpoint is noted in ``checkpoints`` before it is queued. `records` may be empty: a
    /// source's state can change without a sample (a first reading sets a baseline).
    public func publish(_ records: [HealthRecord], checkpoint: SourceCheckpoint?) async {
        if let checkpoint { checkpoints.record(checkpoint) }
        guard !records.isEmpty || checkpoint != nil else { return }
        for subscription in subscriptions {
            let carried = subscription.storesCheckpoints ? checkpoint : nil
            // Most sinks take everything: then hand the caller's array on as is (no per-record copy).
            let wanted = records.allSatisfy(subscription.accepts) ? records : records.filter(subscription.accepts)
            guard !wanted.isEmpty || carried != nil else { continue }
            // Add exactly what this call evicted: copying the queue's total in races with
            // concurrent publishers and overwrites drops the sink itself reported.
            let dropped = await subscription.queue.enqueue(wanted, checkpoint: carried)
            if dropped > 0 { subscription.status?.recordsDropped(dropped) }
        }
    }

    /// Ends the stream: sinks drain their queues and then see the end.
    public func finish() {
        for subscription in subscriptions { subscription.queue.finish() }
    }

    /// The subscription named `name`.
    public func subscription(named name: String) -> Subscription? {
        subscriptions.first { $0.name == name }
    }
}

/// A source's handle for publishing; counts what the source published in its status.
public struct SamplePublisher: Sendable {
    let bus: SampleBus
    let status: StatusReporter?
    /// Metadata every published record gets where it has no value of its own (the gateway's
    /// provenance and time zone; see ``HealthRecord/stamped(_:)``); empty: records go as they are.
    let stamp: Metadata

    /// The base of the gateway's clock now (see ``ClockBase``), stamped on every record not
    /// dated by a device's own clock (``MetadataKey/deviceClock``): a later step of the clock moves
    /// those records by the step. nil: no base is stamped.
    let clockBase: (@Sendable () -> ClockBase)?

    public init(
        bus: SampleBus, status: StatusReporter?, stamp: Metadata = Metadata(), clockBase: (@Sendable () -> ClockBase)? = nil
    ) {
        self.bus = bus
        self.status = status
        self.stamp = stamp
        self.clockBase = clockBase
    }

    /// Publishes records. Returns when every sink queue took them (see ``SampleBus/publish(_:)``).
    /// Cancellation does not cut a wait for room short, so records handed over during a graceful
    /// stop are still delivered; a forced shutdown releases the wait.
    public func publish(_ records: [HealthRecord]) async {
        guard !records.isEmpty else { return }
        let outgoing = stamped(arbitrated(records))
        guard !outgoing.isEmpty else { return }
        await bus.publish(outgoing)
        guard let status else { return }
        // A plain loop: a key path applied per record cost more than the rest of publishing.
        var latest: Date?
        for record in outgoing {
            if let end = record.endDate, latest.map({ end > $0 }) ?? true { latest = end }
        }
        status.recordsHandled(outgoing.count, lastDate: latest)
    }

    /// The records without the heart rate another path of the same wearer feeds
    /// (``HeartRateArbiter``); before anything is derived, so a dropped series derives nothing.
    private func arbitrated(_ records: [HealthRecord]) -> [HealthRecord] {
        bus.arbiter?.admit(records) ?? records
    }

    /// The records with what the gateway derives from them: after each finished heartbeat
    /// series, its heart-rate variability (``HeartbeatSeriesSample/variabilitySamples()``).
    private func derived(_ records: [HealthRecord]) -> [HealthRecord] {
        guard records.contains(where: { if case .heartbeatSeries = $0 { true } else { false } }) else { return records }
        var result: [HealthRecord] = []
        for record in records {
            result.append(record)
            if case .heartbeatSeries(let series) = record { result += series.variabilitySamples().map(HealthRecord.quantity) }
        }
        return result
    }

    /// The records as they go on the bus: with what is derived from them, stamped with the
    /// provenance and, unless dated by a device's clock, the clock's base. Whose each reading is
    /// is decided where it is committed (the store's writer), not here.
    private func stamped(_ records: [HealthRecord]) -> [HealthRecord] {
        let records = derived(records)
        guard let clockBase else { return stamp.isEmpty ? records : records.map { $0.stamped(stamp) } }
        var dated = stamp
        dated.clockBase = clockBase()
        return records.map { $0.isDatedByDeviceClock ? $0.stamped(stamp) : $0.stamped(dated) }
    }

    /// Publishes one record.
    public func publish(_ record: HealthRecord) async {
        await publish([record])
    }

    /// Publishes records with the source's new checkpoint, which a sink that stores checkpoints
    /// commits in the same transaction as the records (see ``SourceCheckpoint``). `records` may
    /// be empty. Returns when every sink queue took them, like ``publish(_:)-([HealthRecord])``.
    public func publish(_ records: [HealthRecord], checkpoint: SourceCheckpoint) async {
        let outgoing = stamped(arbitrated(records))
        await bus.publish(outgoing, checkpoint: checkpoint)
        guard let status, !outgoing.isEmpty else { return }
        var latest: Date?
        for record in outgoing {
            if let end = record.endDate, latest.map({ end > $0 }) ?? true { latest = end }
        }
        status.recordsHandled(outgoing.count, lastDate: latest)
    }
}

extension HealthRecord {
    /// The end of the interval the record covers.
    public var endDate: Date? {
        switch self {
        case .quantity(let sample): sample.endDate
        case .quantitySeries(let series): series.endDate
        case .heartbeatSeries(let series): series.endDate
        case .workout(let workout): workout.endDate
        case .correlation(let correlation): correlation.endDate
        }
    }
}

