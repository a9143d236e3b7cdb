import Foundation
import GatewayTesting
import HealthModel
import HealthStore
@testable import SampleBus
import XCTest

/// Source checkpoints on the bus: they reach only sinks that store them, always with (never
/// before) the last record published beside them, and the ledger serves the newest.
final class CheckpointTests: XCTestCase {
    private let ids = SampleIDGenerator(seed: 5, milliseconds: { 1_800_000_000_000 })

    private func checkpoint(_ key: String, _ value: String) -> SourceCheckpoint {
        SourceCheckpoint(namespace: "test", key: key, payload: Data(value.utf8))
    }

    private func take(_ inbox: SinkInbox, _ maxCount: Int) async throws -> SinkBatch {
        let batch = await inbox.nextBatch(maxCount: maxCount)
        return try XCTUnwrap(batch)
    }

    private func values(_ checkpoints: [SourceCheckpoint]) -> [String] {
        checkpoints.map { "\($0.key)=\(String(decoding: $0.payload, as: UTF8.self))" }
    }

    private func bus(policy: OverflowPolicy = .block, capacity: Int = 100) -> SampleBus {
        SampleBus(
            sinks: [
                (name: "store", queue: QueueConfiguration(capacity: capacity, policy: policy), accepts: { _ in true }, status: nil),
                (name: "plain", queue: QueueConfiguration(capacity: capacity, policy: policy), accepts: { _ in true }, status: nil),
            ],
            storesCheckpoints: [true, false])
    }

    func testACheckpointGoesOutWithTheBatchHoldingItsLastRecordAndOnlyToStoringSinks() async throws {
        let bus = bus()
        let store = try XCTUnwrap(bus.subscription(named: "store")).inbox
        let plain = try XCTUnwrap(bus.subscription(named: "plain")).inbox
        let records = stepRecords(0..<5, ids: ids)
        await bus.publish(Array(records[0..<3]), checkpoint: checkpoint("a", "3"))
        await bus.publish(Array(records[3..<5]), checkpoint: checkpoint("a", "5"))

        // A batch that cuts the first publish short carries no checkpoint.
        let first = try await take(store, 2)
        XCTAssertEqual(stepValues(first.records), [0, 1])
        XCTAssertEqual(first.checkpoints, [])
        let second = try await take(store, 2)
        XCTAssertEqual(stepValues(second.records), [2, 3])
        XCTAssertEqual(values(second.checkpoints), ["a=3"])
        let third = try await take(store, 2)
        XCTAssertEqual(stepValues(third.records), [4])
        XCTAssertEqual(values(third.checkpoints), ["a=5"])

        // The other sink sees the records alone.
        let plainBatch = try await take(plain, 10)
        XCTAssertEqual(stepValues(plainBatch.records), [0, 1, 2, 3, 4])
        XCTAssertEqual(plainBatch.checkpoints, [])
    }

    func testACheckpointWithoutRecordsWakesTheSinkAndCoalescesWithItsPredecessor() async throws {
        let bus = bus()
        let store = try XCTUnwrap(bus.subscription(named: "store")).inbox
        let plain = try XCTUnwrap(bus.subscription(named: "plain")).inbox
        let waiting = Task { await store.nextBatch(maxCount: 10) }
        try await waitUntil("the sink to wait") { bus.subscriptions[0].queue.isConsumerWaiting }
        await bus.publish([], checkpoint: checkpoint("a", "baseline"))
        let waited = await waiting.value
        let batch = try XCTUnwrap(waited)
        XCTAssertEqual(batch.records.count, 0)
        XCTAssertEqual(values(batch.checkpoints), ["a=baseline"])
        XCTAssertEqual(plain.depth, 0, "a sink that stores no checkpoints gets nothing")

        // Two checkpoints of one key with no record between them go out as the newer one.
        await bus.publish([], checkpoint: checkpoint("a", "1"))
        await bus.publish([], checkpoint: checkpoint("b", "1"))
        await bus.publish([], checkpoint: checkpoint("a", "2"))
        let coalesced = try await take(store, 10)
        XCTAssertEqual(values(coalesced.checkpoints), ["b=1", "a=2"])
    }

    func testAnUnacknowledgedBatchIsRedeliveredWithItsCheckpoints() async throws {
        let bus = bus()
        let subscription = try XCTUnwrap(bus.subscription(named: "store"))
        await bus.publish(stepRecords(0..<2, ids: ids), checkpoint: checkpoint("a", "2"))
        let first = try await take(subscription.inbox, 10)
        XCTAssertEqual(values(first.checkpoints), ["a=2"])
        subscription.queue.prepareForRedelivery()
        let again = try await take(subscription.inbox, 10)
        XCTAssertEqual(stepValues(again.records), [0, 1])
        XCTAssertEqual(values(again.checkpoints), ["a=2"])
    }

    func testDropOldestKeepsTheNewestCheckpointPerKeyOnly() async throws {
        let bus = bus(policy: .dropOldest, capacity: 2)
        let store = try XCTUnwrap(bus.subscription(named: "store")).inbox
        for value in 0..<50 {
            await bus.publish(stepRecords(value..<(value + 1), ids: ids), checkpoint: checkpoint("a", String(value + 1)))
        }
        // Records 48 and 49 remain; every checkpoint whose records were evicted collapsed into
        // the newest of them, so the pending list stays bounded.
        let batch = try await take(store, 1)
        XCTAssertEqual(stepValues(batch.records), [48])
        XCTAssertEqual(values(batch.checkpoints), ["a=48", "a=49"])
        let last = try await take(store, 1)
        XCTAssertEqual(values(last.checkpoints), ["a=50"])
    }

    func testTheLedgerServesThePublishedCheckpointBeforeTheDurableOne() async throws {
        struct Durable: SourceCheckpointReader {
            func checkpoint(namespace: String, key: String) async throws -> SourceCheckpoint? {
                SourceCheckpoint(namespace: namespace, key: key, payload: Data("committed".utf8))
            }
        }
        let ledger = CheckpointLedger(durable: Durable())
        let bus = SampleBus(
            sinks: [(name: "store", queue: QueueConfiguration(), accepts: { _ in true }, status: nil)],
            storesCheckpoints: [true], checkpoints: ledger)
        let before = try await ledger.checkpoint(namespace: "test", key: "a")
        XCTAssertEqual(before.map { String(decoding: $0.payload, as: UTF8.self) }, "committed")
        await bus.publish([], checkpoint: checkpoint("a", "published"))
        let after = try await ledger.checkpoint(namespace: "test", key: "a")
        XCTAssertEqual(after.map { String(decoding: $0.payload, as: UTF8.self) }, "published")
        let other = try await ledger.checkpoint(namespace: "other", key: "a")
        XCTAssertEqual(other.map { String(decoding: $0.payload, as: UTF8.self) }, "committed")
    }
}
