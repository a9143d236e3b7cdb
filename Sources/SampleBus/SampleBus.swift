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

        /// The inbox the sink reads.
        public var inbox: SinkInbox { SinkInbox(queue: queue) }
        /// Records dropped by the overflow policy.
        public var droppedCount: Int { queue.droppedCount }
    }

    public let subscriptions: [Subscription]

    /// Creates a bus with its sinks' queues.
    /// - Parameter sinks: name, queue settings, the record filter, and the status entry to which
    ///   drops are reported.
    public init(
        sinks: [(name: String, queue: QueueConfiguration, accepts: @Sendable (HealthRecord) -> Bool, status: StatusReporter?)]
    ) {
        subscriptions = sinks.map {
            Subscription(
                name: $0.name, queue: SinkQueue(configuration: $0.queue), accepts: $0.accepts,
                status: $0.status)
        }
    }

    /// Offers records to every sink that accepts them.
    public func publish(_ records: [HealthRecord]) async {
        guard !records.isEmpty else { return }
        for subscription in subscriptions {
            // Most sinks take everything: then hand the caller's array on as is (no per-record copy,
            // Benchmarks/RESULTS.md "Ingest").
            let wanted = records.allSatisfy(subscription.accepts) ? records : records.filter(subscription.accepts)
            guard !wanted.isEmpty else { continue }
            // Add exactly what this call evicted. Copying the queue's total in (as before) raced
            // with concurrent publishers and overwrote drops the sink itself had reported.
            let dropped = await subscription.queue.enqueue(wanted)
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

    public init(bus: SampleBus, status: StatusReporter?) {
        self.bus = bus
        self.status = status
    }

    /// Publishes records. Returns when every sink queue took them (see ``SampleBus/publish(_:)``).
    /// Cancellation does not cut a wait for room short, so records handed over during a graceful
    /// stop are still delivered; a forced shutdown releases the wait.
    public func publish(_ records: [HealthRecord]) async {
        guard !records.isEmpty else { return }
        await bus.publish(records)
        guard let status else { return }
        // A plain loop: a key path applied per record cost more than the rest of publishing.
        var latest: Date?
        for record in records {
            if let end = record.endDate, latest.map({ end > $0 }) ?? true { latest = end }
        }
        status.recordsHandled(records.count, lastDate: latest)
    }

    /// Publishes one record.
    public func publish(_ record: HealthRecord) async {
        await publish([record])
    }
}

extension HealthRecord {
    /// The end of the interval the record covers.
    public var endDate: Date? {
        switch self {
        case .quantity(let sample): sample.endDate
        case .heartbeatSeries(let series): series.endDate
        case .workout(let workout): workout.endDate
        }
    }
}

public import Foundation
