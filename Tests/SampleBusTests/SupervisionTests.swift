import Foundation
import GatewayTesting
import HealthModel
@testable import SampleBus
import Synchronization
import XCTest

/// Restarts with backoff, errors in the status board, and redelivery to a restarted sink.
final class SupervisionTests: XCTestCase {
    private let ids = SampleIDGenerator(seed: 23, milliseconds: { 1_800_000_000_000 })

    func testRestartPolicyDelays() {
        let policy = RestartPolicy()
        XCTAssertEqual(
            (1...10).map { policy.delay(attempt: $0) },
            [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16),
             .seconds(32), .seconds(60), .seconds(60), .seconds(60)])
        XCTAssertEqual(policy.delay(attempt: 0), .milliseconds(500))
        XCTAssertEqual(policy.delay(attempt: 1_000), .seconds(60), "no overflow on long outages")
        let custom = RestartPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(5), resetAfter: .seconds(30))
        XCTAssertEqual((1...5).map { custom.delay(attempt: $0) }, [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
    }

    /// Waits until the one sleeper on `clock` is the backoff of `delay`: not due 1 ms before,
    /// due at `delay`. Then lets it pass.
    private func passBackoff(
        _ delay: Duration, clock: ManualClock, file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        try await clock.waitForSleepers(1)
        let before = clock.elapsed
        clock.advance(by: delay - .milliseconds(1))
        XCTAssertEqual(clock.sleeperCount, 1, "backoff ended before \(delay)", file: file, line: line)
        // Due now: the caller waits for the restart it causes. (The sleeper count may already be
        // 1 again when the restarted plugin fails at once.)
        clock.advance(by: .milliseconds(1))
        XCTAssertEqual(clock.elapsed - before, delay, file: file, line: line)
    }

    func testFailingSourceRestartsWithExponentialBackoffWhileOthersRun() async throws {
        let clock = ManualClock()
        let log = RecordingLogSink()
        let flaky = ControlledSource(failImmediately: 4)
        let steady = ScriptedSource()
        let sink = CollectingSink()
        let policy = RestartPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(4), resetAfter: .seconds(60))
        let gateway = makeGateway(
            sources: [("flaky", flaky), ("steady", steady)],
            sinks: [("sink", QueueConfiguration(), sink)], clock: clock, restartPolicy: policy, log: log)
        let (shutdown, run) = GatewayRun.start(gateway)
        let board = gateway.statusBoard
        let records = stepRecords(0..<5, ids: ids)

        for (attempt, delay) in [(1, Duration.seconds(1)), (2, .seconds(2)), (3, .seconds(4)), (4, .seconds(4))] {
            try await clock.waitForSleepers(1)
            XCTAssertEqual(flaky.runs, attempt)
            let status = try XCTUnwrap(board.status(of: "flaky"))
            XCTAssertEqual(status.state, .restarting)
            XCTAssertEqual(status.restarts, attempt)
            XCTAssertEqual(status.errors, attempt)
            XCTAssertEqual(status.lastError, "boom in run \(attempt)")
            XCTAssertEqual(status.lastErrorDate, clock.now(), "the error is dated by the injected clock")
            // The other source keeps publishing and the sink keeps writing meanwhile.
            steady.send([records[attempt - 1]])
            try await waitUntil("the steady source's record to arrive") { sink.records.count == attempt }
            XCTAssertEqual(board.status(of: "steady")?.state, .running)
            XCTAssertEqual(board.status(of: "steady")?.restarts, 0)

            try await passBackoff(delay, clock: clock)
            try await waitUntil("restart \(attempt)") { flaky.runs == attempt + 1 }
        }
        try await waitUntil("the flaky source to run") { board.status(of: "flaky")?.state == .running }
        XCTAssertTrue(log.contains("flaky failed: boom in run 1; restarting in 1.0 s (attempt 1)"))
        XCTAssertTrue(log.contains("flaky failed: boom in run 4; restarting in 4.0 s (attempt 4)"))

        // A failure right after a restart keeps backing off at the maximum…
        flaky.fail()
        try await passBackoff(.seconds(4), clock: clock)
        try await waitUntil("restart 5") { flaky.runs == 6 }
        // …but a run that lasted `resetAfter` on the gateway's clock starts again from the first delay.
        try await waitUntil("the flaky source to run") { board.status(of: "flaky")?.state == .running }
        clock.advance(by: .seconds(60))
        flaky.fail()
        try await passBackoff(.seconds(1), clock: clock)
        try await waitUntil("restart 6") { flaky.runs == 7 }
        XCTAssertEqual(board.status(of: "flaky")?.restarts, 6)

        steady.send([records[4]])
        try await waitUntil("the last record") { sink.records.count == 5 }
        shutdown.requestStop()
        try await run.waitForReturn()
        XCTAssertEqual(stepValues(sink.records), [0, 1, 2, 3, 4])
        XCTAssertEqual(board.status(of: "flaky")?.state, .stopped)
        XCTAssertEqual(board.status(of: "steady")?.state, .stopped)
        XCTAssertEqual(board.status(of: "sink")?.state, .finished)
    }

    func testStopDuringBackoffStopsTheSource() async throws {
        let clock = ManualClock()
        let flaky = ControlledSource(failImmediately: 1)
        let gateway = makeGateway(
            sources: [("flaky", flaky)], sinks: [("sink", QueueConfiguration(), CollectingSink())], clock: clock)
        let (shutdown, run) = GatewayRun.start(gateway)
        try await clock.waitForSleepers(1)
        shutdown.requestStop()
        try await run.waitForReturn()
        XCTAssertEqual(flaky.runs, 1, "not restarted after the stop request")
        XCTAssertEqual(gateway.statusBoard.status(of: "flaky")?.state, .stopped)
    }

    func testSinkThatThrowsMidBatchGetsTheSameBatchAgain() async throws {
        let clock = ManualClock()
        let source = ScriptedSource()
        let sink = BatchLoggingSink(batchSize: 5, failures: 1)
        let policy = RestartPolicy(initialDelay: .seconds(2), maximumDelay: .seconds(8), resetAfter: .seconds(60))
        let gateway = makeGateway(source: source, sink: sink, clock: clock, restartPolicy: policy)
        let (shutdown, run) = GatewayRun.start(gateway)
        let records = stepRecords(0..<12, ids: ids)

        source.send(Array(records[0..<5]))
        try await clock.waitForSleepers(1)
        let status = try XCTUnwrap(gateway.statusBoard.status(of: "sink"))
        XCTAssertEqual(status.state, .restarting)
        XCTAssertEqual(status.restarts, 1)
        XCTAssertEqual(status.lastError, "disk on fire")
        // More records arrive while the sink is down; they wait in its queue.
        source.send(Array(records[5..<12]))
        try await waitUntil("every record queued") { source.published == 12 }

        try await passBackoff(.seconds(2), clock: clock)
        try await waitUntil("the sink to drain its queue") { sink.batches.map(\.count).reduce(0, +) == 17 }
        XCTAssertEqual(sink.runs, 2)
        let batches = sink.batches
        XCTAssertEqual(batches[0], Array(records[0..<5]), "the batch it failed on")
        XCTAssertEqual(batches[1], batches[0], "the same batch, redelivered after the restart")
        XCTAssertEqual(Array(batches.dropFirst().joined()), records, "nothing lost, nothing twice")

        shutdown.requestStop()
        try await run.waitForReturn()
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.records, 12)
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.state, .finished)
    }

    func testCollectingSinkFailureIsRedeliveredAndCommittedOnce() async throws {
        let clock = ManualClock()
        let source = ScriptedSource()
        let sink = CollectingSink(batchSize: 4)
        sink.failNext(2)
        let gateway = makeGateway(source: source, sink: sink, clock: clock)
        let (shutdown, run) = GatewayRun.start(gateway)
        let records = stepRecords(0..<10, ids: ids)
        source.send(records)
        try await passBackoff(.milliseconds(500), clock: clock)
        try await passBackoff(.seconds(1), clock: clock)
        try await waitUntil("every record committed") { sink.records.count == 10 }
        XCTAssertEqual(sink.records, records)
        XCTAssertEqual(sink.runs, 3)
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.restarts, 2)
        shutdown.requestStop()
        try await run.waitForReturn()
        XCTAssertEqual(sink.records, records, "still exactly once after the drain")
    }

    func testRedeliveryThroughTheInboxDirectly() async throws {
        let (inbox, feed, finish) = SinkInbox.standalone(configuration: QueueConfiguration(capacity: 10, policy: .block))
        let records = stepRecords(0..<6, ids: ids)
        await feed(records)
        let first = await inbox.next(maxCount: 4)
        XCTAssertEqual(first, Array(records[0..<4]))
        // The sink failed before asking again: the supervisor asks for redelivery.
        inbox.queue.prepareForRedelivery()
        let again = await inbox.next(maxCount: 2)
        XCTAssertEqual(again, first, "the whole unacknowledged batch, whatever the new maxCount")
        // Asking for the next batch acknowledged it: a second restart does not bring it back.
        let second = await inbox.next(maxCount: 4)
        XCTAssertEqual(second, Array(records[4..<6]))
        inbox.acknowledge()
        inbox.queue.prepareForRedelivery()
        finish()
        let end = await inbox.next(maxCount: 4)
        XCTAssertNil(end, "an acknowledged batch is not redelivered")
    }
}
