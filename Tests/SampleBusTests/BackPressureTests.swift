import Foundation
import GatewayTesting
import HealthModel
@testable import SampleBus
import Synchronization
import XCTest

/// Bounded sink queues under both overflow policies, through the bus alone and through a
/// running gateway.
final class BackPressureTests: XCTestCase {
    private let ids = SampleIDGenerator(seed: 11, milliseconds: { 1_800_000_000_000 })

    private func bus(capacity: Int, policy: OverflowPolicy, board: StatusBoard) -> SampleBus {
        let status = board.register(name: "sink", kind: "test-sink", role: .sink)
        return SampleBus(sinks: [
            (name: "sink", queue: QueueConfiguration(capacity: capacity, policy: policy),
             accepts: { _ in true }, status: status)
        ])
    }

    /// Three records published on a `.block` bus of capacity 1, once the publisher waits for room.
    private func publisherWaitingForRoom() async throws -> (
        bus: SampleBus, subscription: SampleBus.Subscription, records: [HealthRecord], publisher: Task<Void, Never>
    ) {
        let bus = bus(capacity: 1, policy: .block, board: StatusBoard())
        let subscription = try XCTUnwrap(bus.subscription(named: "sink"))
        let records = stepRecords(0..<3, ids: ids)
        let publisher = Task { await bus.publish(records) }
        try await waitUntil("the publisher to wait") { subscription.queue.waitingProducerCount == 1 }
        return (bus, subscription, records, publisher)
    }

    // MARK: - .block

    func testBlockMakesThePublisherWaitAndLosesNothing() async throws {
        let board = StatusBoard()
        let bus = bus(capacity: 3, policy: .block, board: board)
        let subscription = try XCTUnwrap(bus.subscription(named: "sink"))
        let inbox = subscription.inbox
        let records = stepRecords(0..<5, ids: ids)

        await bus.publish(Array(records[0..<3]))
        XCTAssertEqual(inbox.depth, 3)

        let returned = Locked(false)
        let publisher = Task {
            await bus.publish(Array(records[3..<5]))
            returned.withLock { $0 = true }
        }
        // The publisher is parked on the full queue: wait for that state, not for time.
        try await waitUntil("the publisher to wait for room") { subscription.queue.waitingProducerCount == 1 }
        XCTAssertFalse(returned.value, "publish returned while the queue was full")
        XCTAssertEqual(inbox.depth, 3)

        // Taking a batch makes room; the publisher finishes queueing and returns.
        let first = await inbox.next(maxCount: 2)
        XCTAssertEqual(stepValues(first ?? []), [0, 1])
        await publisher.value
        XCTAssertTrue(returned.value)
        bus.finish()

        var rest: [HealthRecord] = []
        while let batch = await inbox.next(maxCount: 10) { rest += batch }
        XCTAssertEqual(stepValues(rest), [2, 3, 4], "nothing lost, order kept")
        XCTAssertEqual(subscription.droppedCount, 0)
        XCTAssertEqual(board.status(of: "sink")?.dropped, 0)
    }

    func testBlockThroughTheGatewayWithASinkHoldingABatch() async throws {
        let (_, _, source, sink, gateway, shutdown, run) = startWithAHoldingSink(
            batchSize: 1, queue: QueueConfiguration(capacity: 2, policy: .block))
        let queue = try XCTUnwrap(gateway.bus.subscription(named: "sink")).queue

        let records = stepRecords(0..<20, ids: ids)
        source.send([records[0]])
        try await waitUntil("the sink to hold record 0") { sink.isHoldingBatch }
        source.send([records[1]])
        source.send([records[2]])
        try await waitUntil("two records queued") { queue.depth == 2 }
        source.send([records[3]])
        try await waitUntil("the source to wait for room") { queue.waitingProducerCount == 1 }
        XCTAssertEqual(source.published, 3, "the fourth publish has not returned")
        XCTAssertEqual(gateway.statusBoard.status(of: "source")?.records, 3)

        for record in records[4...] { source.send([record]) }
        // Release batch after batch; every record arrives, in order, while the source keeps
        // bumping into the full queue.
        while sink.records.count < records.count {
            try await waitUntil("the sink to hold the next batch") { sink.isHoldingBatch }
            let committed = sink.records.count
            sink.release()
            try await waitUntil("the batch to commit") { sink.records.count > committed }
        }
        XCTAssertEqual(stepValues(sink.records), Array(0..<20))
        XCTAssertEqual(source.published, 20)
        XCTAssertEqual(gateway.bus.subscriptions[0].droppedCount, 0)

        shutdown.requestStop()
        try await run.waitForReturn()
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.records, 20)
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.dropped, 0)
    }

    /// A graceful stop cancels the sources; a source parked on a full queue must still deliver
    /// what it already holds, so cancellation does not end the wait for room.
    func testCancelledPublisherStillDeliversEverything() async throws {
        let (_, subscription, records, publisher) = try await publisherWaitingForRoom()
        publisher.cancel()
        XCTAssertEqual(subscription.queue.waitingProducerCount, 1, "still waiting after the cancel")
        var received: [HealthRecord] = []
        while received.count < 3, let batch = await subscription.inbox.next(maxCount: 10) {
            received += batch
        }
        await publisher.value
        XCTAssertEqual(received, records)
        XCTAssertEqual(subscription.droppedCount, 0)
    }

    /// Finishing the bus (a forced shutdown) releases a waiting publisher.
    func testFinishReleasesAWaitingPublisher() async throws {
        let (bus, subscription, _, publisher) = try await publisherWaitingForRoom()
        bus.finish()
        await publisher.value
        XCTAssertEqual(subscription.queue.waitingProducerCount, 0)
        let batch = await subscription.inbox.next(maxCount: 10)
        XCTAssertEqual(stepValues(batch ?? []), [0], "what was queued before the end is still delivered")
        let end = await subscription.inbox.next(maxCount: 10)
        XCTAssertNil(end)
    }

    // MARK: - Waiting for a batch

    func testWaitForDepthWakesOnlyOnceTheBatchIsThere() async throws {
        let bus = bus(capacity: 4, policy: .block, board: StatusBoard())
        let subscription = try XCTUnwrap(bus.subscription(named: "sink"))
        let queue = subscription.queue
        let records = stepRecords(0..<6, ids: ids)

        let waiter = Task { await subscription.inbox.waitForDepth(atLeast: 3) }
        try await waitUntil("the consumer to wait for 3 records") { queue.isConsumerWaiting }
        // `publish` returns after the enqueue has decided whether to wake the consumer, so this
        // checks the decision itself, not a race with the waiter's task.
        await bus.publish(Array(records[0..<2]))
        XCTAssertTrue(queue.isConsumerWaiting, "woken with 2 of the 3 records it waits for")
        await bus.publish([records[2]])
        await waiter.value
        XCTAssertFalse(queue.isConsumerWaiting)
        XCTAssertEqual(subscription.inbox.depth, 3)

        // Asking for more than the queue holds waits for a full queue, not forever: otherwise a
        // publisher blocked on the full queue and the consumer would wait on each other.
        let greedy = Task { await subscription.inbox.waitForDepth(atLeast: 100) }
        let publisher = Task { await bus.publish(Array(records[3..<6])) }
        await greedy.value
        XCTAssertEqual(subscription.inbox.depth, 4)
        var all: [HealthRecord] = []
        while all.count < 6, let batch = await subscription.inbox.next(maxCount: 10) { all += batch }
        await publisher.value
        XCTAssertEqual(stepValues(all), [0, 1, 2, 3, 4, 5], "nothing lost, order kept")
    }

    func testWaitForDepthEndsWhenCancelledOrFinished() async throws {
        let bus = bus(capacity: 10, policy: .block, board: StatusBoard())
        let subscription = try XCTUnwrap(bus.subscription(named: "sink"))
        let queue = subscription.queue

        let cancelled = Task { await subscription.inbox.waitForDepth(atLeast: 5) }
        try await waitUntil("the consumer to wait") { queue.isConsumerWaiting }
        cancelled.cancel()
        await cancelled.value
        XCTAssertFalse(queue.isConsumerWaiting, "a forced stop releases the wait")

        let finished = Task { await subscription.inbox.waitForDepth(atLeast: 5) }
        try await waitUntil("the consumer to wait again") { queue.isConsumerWaiting }
        await bus.publish(stepRecords(0..<1, ids: ids))
        XCTAssertTrue(queue.isConsumerWaiting)
        bus.finish()
        await finished.value
        XCTAssertEqual(subscription.inbox.depth, 1, "the end of the stream wakes it with what is queued")
    }

    // MARK: - .dropOldest

    func testDropOldestDropsTheOldestAndCountsExactly() async throws {
        let board = StatusBoard()
        let bus = bus(capacity: 3, policy: .dropOldest, board: board)
        let subscription = try XCTUnwrap(bus.subscription(named: "sink"))
        for record in stepRecords(0..<10, ids: ids) {
            await bus.publish([record])
        }
        XCTAssertEqual(subscription.droppedCount, 7)
        XCTAssertEqual(board.status(of: "sink")?.dropped, 7)
        // One publish larger than the queue keeps only its newest records.
        await bus.publish(stepRecords(10..<15, ids: ids))
        XCTAssertEqual(subscription.droppedCount, 12)
        XCTAssertEqual(board.status(of: "sink")?.dropped, 12)
        bus.finish()
        let kept = await subscription.inbox.next(maxCount: 100)
        XCTAssertEqual(stepValues(kept ?? []), [12, 13, 14])
        let end = await subscription.inbox.next(maxCount: 100)
        XCTAssertNil(end)
    }

    /// Many publishers at once: the status counter matches the queue's counter exactly, and drops
    /// the sink reported itself are kept, not overwritten.
    func testDropCounterIsExactUnderConcurrentPublishers() async throws {
        let board = StatusBoard()
        let bus = bus(capacity: 100, policy: .dropOldest, board: board)
        let subscription = try XCTUnwrap(bus.subscription(named: "sink"))
        // The sink's own drops (say, records it refused) share the counter.
        let sinkStatus = try XCTUnwrap(bus.subscriptions.first?.status)
        sinkStatus.recordsDropped(5)

        let records = stepRecords(0..<4_000, ids: ids)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                let mine = records.enumerated().filter { $0.offset % 8 == worker }.map(\.element)
                group.addTask {
                    for record in mine { await bus.publish([record]) }
                }
            }
        }
        XCTAssertEqual(subscription.droppedCount, 3_900)
        XCTAssertEqual(subscription.inbox.depth, 100)
        XCTAssertEqual(board.status(of: "sink")?.dropped, 3_905)
    }

    func testDropOldestThroughTheGatewayWhileTheSinkHoldsABatch() async throws {
        let (_, _, source, sink, gateway, shutdown, run) = startWithAHoldingSink(
            batchSize: 1, queue: QueueConfiguration(capacity: 3, policy: .dropOldest))

        let records = stepRecords(0..<10, ids: ids)
        source.send([records[0]])
        try await waitUntil("the sink to hold record 0") { sink.isHoldingBatch }
        for record in records[1...] { source.send([record]) }
        try await waitUntil("every record published") { source.published == 10 }
        XCTAssertEqual(gateway.bus.subscriptions[0].droppedCount, 6, "1…6 dropped, 7…9 kept")
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.dropped, 6)

        while sink.records.count < 4 {
            try await waitUntil("the sink to hold the next batch") { sink.isHoldingBatch }
            let committed = sink.records.count
            sink.release()
            try await waitUntil("the batch to commit") { sink.records.count > committed }
        }
        XCTAssertEqual(stepValues(sink.records), [0, 7, 8, 9])
        shutdown.requestStop()
        try await run.waitForReturn()
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.dropped, 6)
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.records, 4)
        XCTAssertEqual(gateway.statusBoard.status(of: "source")?.records, 10)
    }

    // MARK: - Filters and configuration

    func testRecordsASinkDoesNotAcceptNeverEnterItsQueue() async throws {
        let board = StatusBoard()
        let bus = SampleBus(sinks: [
            (name: "even", queue: QueueConfiguration(capacity: 100, policy: .block),
             accepts: { stepValues([$0]).first.map { $0 % 2 == 0 } ?? false },
             status: board.register(name: "even", kind: "t", role: .sink)),
            (name: "all", queue: QueueConfiguration(capacity: 100, policy: .block),
             accepts: { _ in true }, status: board.register(name: "all", kind: "t", role: .sink)),
        ])
        await bus.publish(stepRecords(0..<10, ids: ids))
        bus.finish()
        let even = await bus.subscriptions[0].inbox.next(maxCount: 100)
        let all = await bus.subscriptions[1].inbox.next(maxCount: 100)
        XCTAssertEqual(stepValues(even ?? []), [0, 2, 4, 6, 8])
        XCTAssertEqual(stepValues(all ?? []), Array(0..<10))
    }

    func testQueueConfigurationDefaultsAndValidation() throws {
        let decoder = JSONDecoder()
        let defaults = try decoder.decode(QueueConfiguration.self, from: Data("{}".utf8))
        XCTAssertEqual(defaults, QueueConfiguration(capacity: 10_000, policy: .block))
        let drop = try decoder.decode(
            QueueConfiguration.self, from: Data(#"{"capacity":5,"policy":"dropOldest"}"#.utf8))
        XCTAssertEqual(drop, QueueConfiguration(capacity: 5, policy: .dropOldest))
        // The range is checked with the rest of the gateway's settings, where the key path is known.
        XCTAssertThrowsError(try GatewayConfiguration.parse(
            Data(#"{"sinks": [{"kind": "x", "queue": {"capacity": 0}}]}"#.utf8), origin: "q.json"))
        XCTAssertThrowsError(try decoder.decode(QueueConfiguration.self, from: Data(#"{"policy":"drop"}"#.utf8)))
    }
}
