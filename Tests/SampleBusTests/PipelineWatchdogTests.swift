import GatewayTesting
import HealthModel
import HealthStore
@testable import SampleBus
import XCTest

/// The watchdog's state machine without systemd: observations of the store's writer and of the
/// sinks' queues in, `ping` or `withhold` out, on a threshold of 30 s (a `WatchdogSec=60s` unit).
final class PipelineWatchdogTests: XCTestCase {
    private let threshold = Duration.seconds(30)
    private let ids = SampleIDGenerator(seed: 12, milliseconds: { 1_800_000_000_000 })

    private func at(_ seconds: Int) -> Duration { .seconds(seconds) }

    private func observe(
        writer: WriterActivity? = WriterActivity(), _ queues: PipelineWatchdog.QueueHead...
    ) -> PipelineWatchdog.Observation {
        PipelineWatchdog.Observation(writer: writer, queues: queues)
    }

    private func queue(_ sink: String = "sqlite", pending: Int, acknowledged: Int) -> PipelineWatchdog.QueueHead {
        PipelineWatchdog.QueueHead(sink: sink, pending: pending, acknowledged: acknowledged)
    }

    /// A gateway whose radios are gone (bluetoothd down, the stick unplugged) publishes
    /// nothing: an idle writer and empty queues, for as long as it lasts, ping.
    func testAnIdlePipelinePingsWhateverTheTime() {
        var watchdog = PipelineWatchdog(threshold: threshold)
        for second in stride(from: 0, through: 3600, by: 30) {
            XCTAssertEqual(
                watchdog.decide(observe(writer: WriterActivity(begun: 7, ended: 7), queue(pending: 0, acknowledged: 100)), at: at(second)),
                .ping, "at \(second) s")
        }
        XCTAssertEqual(watchdog.decide(observe(writer: nil), at: at(7200)), .ping, "a gateway without a store's writer")
    }

    func testAWriterCallThatLastsTheThresholdWithholdsThePingsUntilItEnds() {
        var watchdog = PipelineWatchdog(threshold: threshold)
        let stuck = WriterActivity(begun: 5, ended: 4)
        XCTAssertEqual(watchdog.decide(observe(writer: stuck), at: at(0)), .ping, "first seen now")
        XCTAssertEqual(watchdog.decide(observe(writer: stuck), at: at(29)), .ping, "not yet the threshold")
        XCTAssertEqual(
            watchdog.decide(observe(writer: stuck), at: at(30)),
            .withhold(reason: "the store's writer has been in one call for 30 s"))
        XCTAssertEqual(
            watchdog.decide(observe(writer: stuck), at: at(45)),
            .withhold(reason: "the store's writer has been in one call for 45 s"))
        XCTAssertEqual(watchdog.decide(observe(writer: WriterActivity(begun: 5, ended: 5)), at: at(50)), .ping, "the call ended")
        XCTAssertEqual(
            watchdog.decide(observe(writer: WriterActivity(begun: 6, ended: 5)), at: at(60)), .ping,
            "the next call is timed from when it is first seen")
        XCTAssertEqual(watchdog.decide(observe(writer: WriterActivity(begun: 6, ended: 5)), at: at(89)), .ping)
        XCTAssertNotEqual(watchdog.decide(observe(writer: WriterActivity(begun: 6, ended: 5)), at: at(90)), .ping)
    }

    /// A writer busy at every check, but each time with another call, commits: it pings.
    func testABusyWriterThatMovesOnPings() {
        var watchdog = PipelineWatchdog(threshold: threshold)
        for check in 0..<100 {
            let begun = UInt64(10 * check + 1)
            XCTAssertEqual(
                watchdog.decide(observe(writer: WriterActivity(begun: begun, ended: begun - 1)), at: at(30 * check)), .ping,
                "check \(check)")
        }
    }

    func testAQueueWhoseSinkAcknowledgesNothingForTheThresholdWithholdsThePings() {
        var watchdog = PipelineWatchdog(threshold: threshold)
        XCTAssertEqual(watchdog.decide(observe(queue(pending: 0, acknowledged: 500)), at: at(0)), .ping)
        // Records arrive and the sink takes them, acknowledging some at each check.
        XCTAssertEqual(watchdog.decide(observe(queue(pending: 40, acknowledged: 520)), at: at(20)), .ping)
        XCTAssertEqual(watchdog.decide(observe(queue(pending: 45, acknowledged: 560)), at: at(45)), .ping)
        // The sink hangs in a write: records wait, none acknowledged.
        XCTAssertEqual(watchdog.decide(observe(queue(pending: 70, acknowledged: 560)), at: at(70)), .ping)
        XCTAssertEqual(
            watchdog.decide(observe(queue(pending: 95, acknowledged: 560), queue("board", pending: 0, acknowledged: 9)), at: at(75)),
            .withhold(reason: "the sink sqlite has acknowledged nothing for 30 s with 95 records waiting"))
        XCTAssertEqual(watchdog.decide(observe(queue(pending: 3, acknowledged: 652)), at: at(80)), .ping, "it moved again")
    }

    /// A queue that holds records without acknowledgements for less than the threshold, and one
    /// that empties between checks, never withhold.
    func testAQueueThatEmptiesOrMovesWithinTheThresholdPings() {
        var watchdog = PipelineWatchdog(threshold: threshold)
        XCTAssertEqual(watchdog.decide(observe(queue(pending: 10, acknowledged: 0)), at: at(0)), .ping)
        XCTAssertEqual(watchdog.decide(observe(queue(pending: 10, acknowledged: 0)), at: at(29)), .ping)
        XCTAssertEqual(watchdog.decide(observe(queue(pending: 0, acknowledged: 0)), at: at(31)), .ping, "an empty queue is no stall")
        XCTAssertEqual(watchdog.decide(observe(queue(pending: 5, acknowledged: 0)), at: at(59)), .ping, "timed from when it was empty")
    }

    /// A sink that holds records on purpose (the `sqlite` sink's batch window) is given that long
    /// beyond the threshold: with `WatchdogSec=4s` (a 2 s threshold) and a 2 s window, a healthy
    /// sink acknowledges every 2 s and a check can fall just before it does.
    func testASinksBatchWindowIsAllowedBeyondTheThreshold() {
        var watchdog = PipelineWatchdog(threshold: .seconds(2))
        let window = Duration.seconds(2)
        func batching(pending: Int, acknowledged: Int) -> PipelineWatchdog.QueueHead {
            PipelineWatchdog.QueueHead(sink: "sqlite", pending: pending, acknowledged: acknowledged, window: window)
        }
        XCTAssertEqual(watchdog.decide(observe(batching(pending: 30, acknowledged: 0)), at: at(0)), .ping)
        XCTAssertEqual(watchdog.decide(observe(batching(pending: 60, acknowledged: 0)), at: at(2)), .ping, "within its window")
        XCTAssertEqual(watchdog.decide(observe(batching(pending: 30, acknowledged: 60)), at: at(3)), .ping, "it committed")
        XCTAssertEqual(watchdog.decide(observe(batching(pending: 90, acknowledged: 60)), at: at(6)), .ping)
        XCTAssertEqual(
            watchdog.decide(observe(batching(pending: 120, acknowledged: 60)), at: at(7)),
            .withhold(reason: "the sink sqlite has acknowledged nothing for 4 s with 120 records waiting"),
            "the threshold and the window passed")
    }

    func testEveryStallIsNamed() {
        var watchdog = PipelineWatchdog(threshold: threshold)
        let stuck = WriterActivity(begun: 2, ended: 1)
        _ = watchdog.decide(observe(writer: stuck, queue(pending: 4, acknowledged: 1), queue("workouts", pending: 1, acknowledged: 3)), at: at(0))
        XCTAssertEqual(
            watchdog.decide(observe(writer: stuck, queue(pending: 9, acknowledged: 1), queue("workouts", pending: 2, acknowledged: 3)), at: at(31)),
            .withhold(reason: "the store's writer has been in one call for 31 s; "
                + "the sink sqlite has acknowledged nothing for 31 s with 9 records waiting; "
                + "the sink workouts has acknowledged nothing for 31 s with 2 records waiting"))
    }

    /// What the gateway reports for a sink's queue: records waiting (queued, or handed out and
    /// not acknowledged) and records acknowledged, a batch counted once acknowledged, never when
    /// it is handed out again after the sink's restart.
    func testAQueueHeadCountsAcknowledgedRecordsOnce() async throws {
        let queue = SinkQueue(configuration: QueueConfiguration(capacity: 100, policy: .block))
        let records = stepRecords(0..<5, ids: ids)
        await queue.enqueue(records)
        XCTAssertEqual(queue.progress.pending, 5)
        XCTAssertEqual(queue.progress.acknowledged, 0)
        let first = await queue.nextBatch(maxCount: 3)
        XCTAssertEqual(first?.records.count, 3)
        XCTAssertEqual(queue.progress.pending, 5, "handed out, not yet acknowledged")
        XCTAssertEqual(queue.progress.acknowledged, 0)
        queue.prepareForRedelivery()
        _ = await queue.nextBatch(maxCount: 3)
        XCTAssertEqual(queue.progress.acknowledged, 0, "handed out again after a restart: no progress")
        queue.acknowledge()
        XCTAssertEqual(queue.progress.pending, 2)
        XCTAssertEqual(queue.progress.acknowledged, 3)
        let second = await queue.nextBatch(maxCount: 3)
        XCTAssertEqual(second?.records.count, 2)
        XCTAssertEqual(queue.progress.acknowledged, 3, "the second batch is out, not acknowledged")
        queue.finish()
        let end = await queue.nextBatch(maxCount: 3)
        XCTAssertNil(end)
        XCTAssertEqual(queue.progress.acknowledged, 5, "asking for the next batch acknowledges the last")
        XCTAssertEqual(queue.progress.pending, 0)
    }
}
