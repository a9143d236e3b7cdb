import Foundation
import GatewayTesting
import HealthModel
@testable import SampleBus
import Synchronization
import XCTest

/// Graceful and forced shutdown of a running gateway.
final class ShutdownTests: XCTestCase {
    private let ids = SampleIDGenerator(seed: 31, milliseconds: { 1_800_000_000_000 })

    func testGracefulStopLetsAHeldBatchCommitAndDrainsTheQueue() async throws {
        let (_, log, source, sink, gateway, shutdown, run) = startWithAHoldingSink()
        let records = stepRecords(0..<15, ids: ids)

        source.send(Array(records[0..<10]))
        try await waitUntil("the sink to hold the first batch") { sink.isHoldingBatch }
        source.send(Array(records[10..<15]))
        try await waitUntil("every record accepted") { source.published == 15 }

        XCTAssertEqual(shutdown.requestStop(), .stopping)
        try await waitUntil("the source to stop") {
            gateway.statusBoard.status(of: "source")?.state == .stopped
        }
        try await waitUntil("the log to say the sinks drain") { log.contains("sources stopped; draining the sinks") }
        XCTAssertFalse(run.hasReturned, "run returned while a batch was still being committed")
        XCTAssertEqual(sink.records.count, 0)

        sink.release()  // the held batch of 10 commits…
        try await waitUntil("the queued batch to be taken") { sink.isHoldingBatch && sink.records.count == 10 }
        sink.release()  // …and the 5 still queued at the stop request follow.
        try await run.waitForReturn()

        XCTAssertEqual(sink.records, records, "every accepted record is in the sink")
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.state, .finished)
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.records, 15)
        XCTAssertEqual(shutdown.stage, .stopping, "the stop stayed graceful")
        XCTAssertFalse(log.contains("forcing shutdown"))
    }

    /// A source parked on a full `.block` queue when the stop request comes still delivers the
    /// records it handed to `publish`; the source's count and the sink's agree.
    func testGracefulStopWithASourceBlockedOnAFullQueueLosesNothing() async throws {
        let (_, _, source, sink, gateway, shutdown, run) = startWithAHoldingSink(
            batchSize: 2, queue: QueueConfiguration(capacity: 2, policy: .block))
        let queue = try XCTUnwrap(gateway.bus.subscriptions.first).queue
        let records = stepRecords(0..<8, ids: ids)

        source.send(Array(records[0..<2]))
        try await waitUntil("the sink to hold a batch") { sink.isHoldingBatch }
        source.send(Array(records[2..<8]))
        try await waitUntil("the source to block") { queue.waitingProducerCount == 1 }
        shutdown.requestStop()

        while !run.hasReturned {
            try await waitUntil("a held batch or the end") { sink.isHoldingBatch || run.hasReturned }
            sink.release()
        }
        XCTAssertEqual(sink.records, records, "the blocked publish was delivered, not dropped")
        XCTAssertEqual(gateway.statusBoard.status(of: "source")?.records, 8)
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.records, 8)
        XCTAssertEqual(shutdown.stage, .stopping)
    }

    /// A forced stop releases a source parked on a full queue, so `run` returns.
    func testForcedStopReleasesASourceBlockedOnAFullQueue() async throws {
        let (_, _, source, sink, gateway, shutdown, run) = startWithAHoldingSink(
            batchSize: 1, queue: QueueConfiguration(capacity: 1, policy: .block))
        let queue = try XCTUnwrap(gateway.bus.subscriptions.first).queue
        source.send(stepRecords(0..<5, ids: ids))
        try await waitUntil("the source to block") { queue.waitingProducerCount == 1 && sink.isHoldingBatch }
        shutdown.requestStop()
        shutdown.requestStop()
        try await run.waitForReturn()
        XCTAssertEqual(shutdown.stage, .forced)
        XCTAssertEqual(sink.records, [], "nothing committed: the sink was cancelled holding its batch")
    }

    /// A sink waiting out its restart backoff when the stop comes restarts at once (the backoff
    /// is not waited out), gets its batch again, drains the rest, and only then does `run`
    /// return, with every sink drained.
    func testSinkFailingDuringTheDrainStillDeliversEverything() async throws {
        let clock = ManualClock()
        let source = ScriptedSource()
        let sink = BatchLoggingSink(batchSize: 4, failures: 1)
        let gateway = makeGateway(source: source, sink: sink, clock: clock, shutdownTimeout: .seconds(30))
        let shutdown = ShutdownSignal()
        let run = Task { await gateway.runReportingOutcome(shutdown: shutdown) }
        let records = stepRecords(0..<10, ids: ids)
        source.send(records)
        try await clock.waitForSleepers(1)  // the sink's backoff after its failure
        try await waitUntil("every record accepted") { source.published == 10 }
        shutdown.requestStop()
        // No clock advance: neither the backoff nor the deadline is waited for.
        let outcome = await run.value
        XCTAssertEqual(outcome, .drained)
        XCTAssertEqual(shutdown.stage, .stopping, "not forced")
        XCTAssertEqual(sink.batches.first, Array(records[0..<4]))
        XCTAssertEqual(Array(sink.batches.dropFirst().joined()), records)
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.state, .finished)
    }

    /// A sink that fails at once every time it drains is restarted at once a bounded number of
    /// times, then given up: the stop neither spins nor waits for the deadline, and the outcome
    /// names the sink.
    func testSinkThatKeepsFailingWhileStoppingIsGivenUp() async throws {
        let clock = ManualClock()
        let log = RecordingLogSink()
        let source = ScriptedSource()
        let sink = BatchLoggingSink(batchSize: 4, failures: 100)
        let gateway = makeGateway(source: source, sink: sink, clock: clock, shutdownTimeout: .seconds(30), log: log)
        let shutdown = ShutdownSignal()
        source.send(stepRecords(0..<10, ids: ids))
        let run = Task { await gateway.runReportingOutcome(shutdown: shutdown) }
        try await clock.waitForSleepers(1)
        shutdown.requestStop()
        let outcome = await run.value
        XCTAssertEqual(outcome, .abandoned(sinks: ["sink"]))
        XCTAssertEqual(shutdown.stage, .stopping)
        XCTAssertEqual(sink.runs, 1 + Gateway.maximumRestartsWhileStopping)
        XCTAssertTrue(log.contains("giving it up with"))
    }

    /// A source that returns on its own is finished, not restarted; the rest keep running until
    /// the stop request.
    func testSourceThatReturnsIsFinishedNotRestarted() async throws {
        let clock = ManualClock()
        let steady = ScriptedSource()
        let sink = CollectingSink()
        let gateway = makeGateway(
            sources: [("once", OneShotSource(records: stepRecords(0..<3, ids: ids))), ("steady", steady)],
            sinks: [("sink", QueueConfiguration(), sink)], clock: clock)
        let (shutdown, run) = GatewayRun.start(gateway)
        try await waitUntil("the one-shot source to finish") {
            gateway.statusBoard.status(of: "once")?.state == .finished
        }
        steady.send(stepRecords(3..<5, ids: ids))
        try await waitUntil("five records") { sink.records.count == 5 }
        XCTAssertFalse(run.hasReturned, "a finished source does not stop the gateway")
        XCTAssertEqual(gateway.statusBoard.status(of: "once")?.restarts, 0)
        XCTAssertEqual(gateway.statusBoard.status(of: "once")?.records, 3)
        shutdown.requestStop()
        try await run.waitForReturn()
        XCTAssertEqual(Set(stepValues(sink.records)), Set(0..<5))
    }

    func testSecondStopRequestForcesShutdown() async throws {
        let (_, log, source, sink, gateway, shutdown, run) = startWithAHoldingSink()

        source.send(stepRecords(0..<3, ids: ids))
        try await waitUntil("the sink to hold a batch") { sink.isHoldingBatch }
        shutdown.requestStop()
        try await waitUntil("the source to stop") {
            gateway.statusBoard.status(of: "source")?.state == .stopped
        }
        XCTAssertFalse(run.hasReturned)

        XCTAssertEqual(shutdown.requestStop(), .forced)
        try await run.waitForReturn()
        XCTAssertEqual(sink.records.count, 0, "the sink was cancelled before its batch committed")
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.state, .stopped)
        XCTAssertTrue(log.contains("second stop request: forcing shutdown"))
    }

    func testShutdownDeadlineForcesShutdown() async throws {
        let (clock, log, source, sink, gateway, shutdown, run) = startWithAHoldingSink(shutdownTimeout: .seconds(5))

        source.send(stepRecords(0..<3, ids: ids))
        try await waitUntil("the sink to hold a batch") { sink.isHoldingBatch }
        XCTAssertEqual(clock.sleeperCount, 0, "no deadline before a stop request")
        shutdown.requestStop()
        try await clock.waitForSleepers(1)  // the shutdown deadline
        clock.advance(by: .milliseconds(4_999))
        XCTAssertEqual(clock.sleeperCount, 1)
        XCTAssertFalse(run.hasReturned)
        clock.advance(by: .milliseconds(1))
        try await run.waitForReturn()
        XCTAssertEqual(shutdown.stage, .forced)
        XCTAssertEqual(sink.records.count, 0)
        XCTAssertEqual(gateway.statusBoard.status(of: "sink")?.state, .stopped)
        XCTAssertTrue(log.contains("sinks did not drain within 5.0 seconds; forcing shutdown"))
    }

    /// A source that does not return when stopped (one waiting on a service that does not
    /// answer) is what the forced stop's warning names, not the sinks, which had nothing to drain.
    func testTheDeadlineNamesTheSourcesWhenTheyAreWhatDidNotStop() async throws {
        let clock = ManualClock()
        let log = RecordingLogSink()
        let source = SlowToStopSource()
        let gateway = makeGateway(source: source, sink: CollectingSink(batchSize: 100), clock: clock, shutdownTimeout: .seconds(5), log: log)
        let (shutdown, run) = GatewayRun.start(gateway)
        try await waitUntil("the source to run") { source.isRunning }
        shutdown.requestStop()
        try await clock.waitForSleepers(1)  // the shutdown deadline
        clock.advance(by: .seconds(5))
        try await waitUntil("the forced stop's warning") { log.contains("sources did not stop within 5.0 seconds") }
        XCTAssertFalse(log.contains("sinks did not drain"))
        source.release()
        try await run.waitForReturn()
        XCTAssertEqual(shutdown.stage, .forced)
    }

    func testStopWithIdleSinksReturnsPromptly() async throws {
        let clock = ManualClock()
        let sinks = (0..<3).map { _ in CollectingSink() }
        let gateway = makeGateway(
            sources: [("a", ScriptedSource()), ("b", ControlledSource())],
            sinks: sinks.enumerated().map { ("sink-\($0.offset)", QueueConfiguration(), $0.element) },
            clock: clock)
        let (shutdown, run) = GatewayRun.start(gateway)
        try await waitUntil("every plugin running") {
            gateway.statusBoard.snapshot().allSatisfy { $0.state == .running }
        }
        XCTAssertEqual(gateway.statusBoard.snapshot().map(\.name), ["sink-0", "sink-1", "sink-2", "a", "b"])
        shutdown.requestStop()
        try await run.waitForReturn()
        XCTAssertEqual(shutdown.stage, .stopping)
        XCTAssertEqual(
            gateway.statusBoard.snapshot().map(\.state), [.finished, .finished, .finished, .stopped, .stopped])
    }

    /// Two sinks given the same name still each get their own queue (the catalog rejects such
    /// configurations, but `Gateway` can be built directly).
    func testSinksWithTheSameNameEachGetTheirRecords() async throws {
        let clock = ManualClock()
        let source = ScriptedSource()
        let first = CollectingSink()
        let second = CollectingSink()
        let gateway = makeGateway(
            sources: [("source", source)],
            sinks: [("store", QueueConfiguration(), first), ("store", QueueConfiguration(), second)],
            clock: clock)
        let (shutdown, run) = GatewayRun.start(gateway)
        let records = stepRecords(0..<4, ids: ids)
        source.send(records)
        try await waitUntil("both sinks to get the records") {
            first.records.count == 4 && second.records.count == 4
        }
        shutdown.requestStop()
        try await run.waitForReturn()
        XCTAssertEqual(first.records, records)
        XCTAssertEqual(second.records, records)
    }

    func testCancelledInboxReaderGetsNil() async throws {
        let (inbox, _, _) = SinkInbox.standalone()
        let result = Locked<[HealthRecord]??>(nil)
        let reader = Task {
            let batch = await inbox.next()
            result.withLock { $0 = .some(batch) }
        }
        reader.cancel()
        try await waitUntil("the cancelled reader to return") { result.value != nil }
        XCTAssertEqual(result.value, .some(nil))
    }

    func testShutdownSignalStages() async throws {
        let signal = ShutdownSignal()
        XCTAssertEqual(signal.stage, .running)
        let reached = Locked<[ShutdownSignal.Stage]>([])
        let waiters = [ShutdownSignal.Stage.stopping, .forced].map { stage in
            Task {
                await signal.wait(for: stage)
                reached.withLock { $0.append(stage) }
            }
        }
        XCTAssertEqual(signal.requestStop(), .stopping)
        try await waitUntil("the stopping waiter") { reached.value == [.stopping] }
        XCTAssertEqual(signal.requestStop(), .forced)
        try await waitUntil("the forced waiter") { reached.value == [.stopping, .forced] }
        XCTAssertEqual(signal.requestStop(), .forced, "a third request stays forced")
        await signal.wait(for: .stopping)  // already past: returns at once
        for waiter in waiters { await waiter.value }

        let other = ShutdownSignal()
        let cancelled = Task { await other.wait(for: .stopping) }
        cancelled.cancel()
        await cancelled.value  // a cancelled waiter stops waiting
        XCTAssertEqual(other.stage, .running)
        other.force()
        XCTAssertEqual(other.stage, .forced)
    }
}
