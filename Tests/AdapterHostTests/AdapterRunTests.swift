import AdapterHost
import Foundation
import GatewayRuntime
import GatewayTesting
import HealthModel
import HealthStore
import HealthgateAdapter
import LinuxSystem
import SQLiteStore
import SampleBus
import Synchronization
import XCTest

/// ``AdapterRun`` against real processes (Tests/Fixtures/adapters/scripted.py, told by its
/// configuration what to write), publishing onto a real bus: the protocol's errors, flow
/// control, checkpoints and their acknowledgements, and stopping.
final class AdapterRunTests: TemporaryDirectoryTestCase {
    override class var directoryPrefix: String { "healthgate-adapter-run" }

    /// A run of the scripted adapter with `configuration`, its events and its log.
    final class Harness: Sendable {
        let logs = RecordingLogSink()
        let events = EventLog()
        let bus: SampleBus
        let sink: (any SampleSink)
        let board = StatusBoard()
        let status: StatusReporter
        let run: AdapterRun

        init(
            configuration: [String: Any], sink: any SampleSink, queue: QueueConfiguration = QueueConfiguration(),
            helloTimeout: Duration = .seconds(10), stopTimeout: Duration = .seconds(3), maxLineBytes: Int = 65_536
        ) throws {
            self.sink = sink
            bus = SampleBus(
                sinks: [(name: "sink", queue: queue, accepts: { _ in true }, status: nil)],
                storesCheckpoints: [sink.checkpointReader != nil], checkpoints: CheckpointLedger(durable: sink.checkpointReader))
            status = board.register(name: "scripted", kind: "exec", role: .source)
            let script = HealthgateExecutable.packageRoot().appendingPathComponent("Tests/Fixtures/adapters/scripted.py").path
            let settings = AdapterSettings(
                executable: "/usr/bin/python3", arguments: ["python3", script], environment: ["PATH=/usr/bin:/bin"], directory: "/",
                adapterConfiguration: try ConfigurationJSONParser.parse(Array(JSONSerialization.data(withJSONObject: configuration))),
                maxLineBytes: maxLineBytes, helloTimeout: helloTimeout, stopTimeout: stopTimeout)
            let logger = Logger(label: "scripted", sink: logs, level: .debug)
            let context = SourceContext(
                publisher: SamplePublisher(bus: bus, status: status), logger: logger, clock: SystemClock(), status: status)
            let events = self.events
            run = AdapterRun(
                settings: settings, name: "scripted", gateway: "healthgate test", ids: SampleIDGenerator(seed: 7), context: context,
                observer: { event in events.append(event) })
        }

        /// Runs the adapter and its sink until `body` returns, then stops the run (as the gateway
        /// does: cancelled) and returns its outcome.
        func whileRunning(_ body: () async throws -> Void) async throws -> AdapterRun.Outcome {
            guard let inbox = bus.subscription(named: "sink")?.inbox else { throw CancellationError() }
            let sink = self.sink
            let logger = Logger(label: "sink", sink: logs, level: .debug)
            let sinkTask = Task { try await sink.run(inbox: inbox, context: SinkContext(logger: logger, clock: SystemClock(), status: status)) }
            let running = Task { try await run.run() }
            do {
                try await body()
            } catch {
                running.cancel()
                _ = await running.result
                bus.finish()
                _ = await sinkTask.result
                throw error
            }
            running.cancel()
            let outcome = try await running.value
            bus.finish()
            _ = await sinkTask.result
            return outcome
        }

        /// Runs until the adapter ends on its own.
        func untilItEnds() async throws -> AdapterRun.Outcome {
            guard let inbox = bus.subscription(named: "sink")?.inbox else { throw CancellationError() }
            let sink = self.sink
            let logger = Logger(label: "sink", sink: logs, level: .debug)
            let sinkTask = Task { try await sink.run(inbox: inbox, context: SinkContext(logger: logger, clock: SystemClock(), status: status)) }
            let outcome = try await run.run()
            bus.finish()
            _ = await sinkTask.result
            return outcome
        }

        var gatewayLines: [String] {
            logs.entries.map(\.message).filter { $0.hasPrefix("adapter stderr: gateway: ") }
                .map { String($0.dropFirst("adapter stderr: gateway: ".count)) }
        }

        /// Waits until `condition` holds, for at most `seconds`.
        func wait(_ what: String, seconds: Double = 10, _ condition: () -> Bool) async throws {
            let deadline = Date().addingTimeInterval(seconds)
            while !condition() {
                guard Date() < deadline else {
                    XCTFail("timed out waiting for \(what); log:\n" + logs.entries.map(\.message).joined(separator: "\n"))
                    throw CancellationError()
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// The events of a run, appended from its tasks.
    final class EventLog: Sendable {
        private let list = Mutex<[AdapterRun.Event]>([])
        func append(_ event: AdapterRun.Event) { list.withLock { $0.append(event) } }
        var count: Int { list.withLock { $0.count } }
    }

    private let reading = #"{"type":"quantity","id":"r1","quantityType":"bodyMass","value":72.5,"unit":"kg","start":"2026-11-29T08:00:00Z"}"#

    func testEveryLineThatIsNoMessageGetsASpecificErrorAndTheAdapterGoesOn() async throws {
        let sink = CollectingSink(batchSize: 1)
        let harness = try Harness(
            configuration: ["lines": [
                "not json",
                #"{"type":"quantity","quantityTipe":"bodyMass"}"#,
                #"{"type":"weather"}"#,
                ["hex": "7b2274797065223a226c6f67222c226d657373616765223a22ff227d0a"],  // {"type":"log","message":"\xff"}
                String(repeating: "x", count: 3000),
                reading,
            ]],
            sink: sink, maxLineBytes: 2048)
        _ = try await harness.whileRunning {
            try await harness.wait("the reading after the bad lines") { sink.records.count == 1 }
            try await harness.wait("four errors on stdin") { harness.gatewayLines.filter { $0.contains(#""type":"error""#) }.count == 5 }
        }
        let errors = harness.gatewayLines.filter { $0.contains(#""type":"error""#) }
        XCTAssertTrue(errors[0].contains("line 2: not JSON"), errors[0])
        XCTAssertTrue(errors[1].contains(#"unknown key \"quantityTipe\"; did you mean \"quantityType\"?"#), errors[1])
        XCTAssertTrue(errors[2].contains(#"unknown message type \"weather\""#), errors[2])
        XCTAssertTrue(errors[3].contains("not valid UTF-8"), errors[3])
        XCTAssertTrue(errors[4].contains("line 6 is longer than maxLineBytes (2048 bytes)"), errors[4])
        XCTAssertTrue(errors.allSatisfy { !$0.contains(#""fatal":true"#) }, "none of them ends the adapter")
        guard case .quantity(let sample)? = sink.records.first else { return XCTFail("no sample") }
        XCTAssertEqual(sample.quantity, Quantity(72.5, .kilogram))
        XCTAssertEqual(sample.syncIdentifier, "adapter/scripted/r1")
        XCTAssertEqual(sample.id, SampleID(syncIdentifier: "adapter/scripted/r1", version: 1), "the uuid comes from the id: stable across runs")
    }

    func testARefusedReadingIsAnsweredWithItsLineAndReasonAndTheRestIsTaken() async throws {
        let sink = CollectingSink(batchSize: 1)
        let harness = try Harness(
            configuration: ["lines": [
                #"{"type":"quantity","id":"a","quantityType":"bodyMass","value":72,"unit":"count/min","start":"2026-11-29T08:00:00Z"}"#,
                #"{"type":"quantity","id":"b","quantityType":"bodyMass","value":72000,"unit":"kg","start":"2026-11-29T08:00:00Z"}"#,
                #"{"type":"quantity","id":"c","quantityType":"bodyMass","value":72,"unit":"kg","start":"2026-11-29T08:00:00Z","end":"2026-11-29T07:00:00Z"}"#,
                #"{"type":"quantity","id":"d","quantityType":"bodyMass","value":72,"unit":"kg","start":"2036-11-29T08:00:00Z"}"#,
                #"{"type":"quantity","id":"e","quantityType":"bodyMass","value":72,"unit":"kg","start":"2026-11-29T08:00:00Z","device":"nobody"}"#,
                #"{"type":"quantity","id":"f","quantityType":"bodyMass","value":72,"unit":"kg","start":"2026-11-29T08:00:00Z","metadata":{"healthgate.person":"Ana"}}"#,
                #"{"type":"device","id":"S-1","name":"Bench scale"}"#,
                #"{"type":"quantity","id":"g","quantityType":"bodyMass","value":160,"unit":"lb","start":"2026-11-29T08:00:00Z","device":"S-1","metadata":{"wasUserEntered":false}}"#,
            ]],
            sink: sink)
        _ = try await harness.whileRunning {
            try await harness.wait("the good reading") { sink.records.count == 1 }
            try await harness.wait("six refusals") { harness.gatewayLines.filter { $0.contains(#""type":"refused""#) }.count == 6 }
        }
        let refusals = harness.gatewayLines.filter { $0.contains(#""type":"refused""#) }
        let expected = [
            (2, "a", #"unit \"count/min\" does not fit bodyMass"#),
            (3, "b", "bodyMass 72000 kg is not plausible"),
            (4, "c", "is before start"),
            (5, "d", "more than a day ahead of the gateway's clock"),
            (6, "e", #"device \"nobody\" was not described"#),
            (7, "f", #"the key \"healthgate.person\" is the gateway's"#),
        ]
        for (refusal, (line, id, reason)) in zip(refusals, expected) {
            XCTAssertTrue(refusal.contains(#""line":\#(line)"#) && refusal.contains(#""id":"\#(id)""#) && refusal.contains(reason), refusal)
        }
        XCTAssertTrue(harness.logs.contains("refused the reading on line 2 (a): unit \"count/min\" does not fit bodyMass"))
        guard case .quantity(let sample)? = sink.records.first else { return XCTFail("no sample") }
        XCTAssertEqual(sample.quantity, Quantity(160, .pound), "kept in the unit it came in; the store converts")
        XCTAssertEqual(sample.device?.localIdentifier, "S-1")
        XCTAssertEqual(sample.device?.name, "Bench scale")
        XCTAssertEqual(sample.metadata["wasUserEntered"], .bool(false))
        XCTAssertEqual(harness.status.current?.details["readingsRefused"], "6")
    }

    func testAWrongProtocolVersionIsRefusedWithTheVersionsSpokenAndEndsTheRun() async throws {
        let harness = try Harness(configuration: ["hello": ["protocol": 2, "adapter": "future"]], sink: CollectingSink())
        let outcome = try await harness.untilItEnds()
        XCTAssertEqual(outcome.protocolError, "the adapter speaks protocol 2; this gateway speaks 1")
        XCTAssertEqual(outcome.termination, .exited(0), "stopped by stop: it exits on its own")
        XCTAssertTrue(harness.gatewayLines.contains { $0.contains(#""fatal":true"#) && $0.contains("speaks protocol 2") }, "\(harness.gatewayLines)")
    }

    func testAnAdapterThatNeverSaysHelloIsStoppedAfterTheTimeout() async throws {
        let harness = try Harness(configuration: ["hello": NSNull()], sink: CollectingSink(), helloTimeout: .milliseconds(500))
        let outcome = try await harness.untilItEnds()
        XCTAssertEqual(outcome.protocolError, "no hello from the adapter within 0.5 s")
    }

    func testAnAdapterThatExitsOnItsOwnEndsTheRunWithItsStatus() async throws {
        let sink = CollectingSink(batchSize: 1)
        let harness = try Harness(configuration: ["lines": [reading], "exitAfter": 3], sink: sink)
        let outcome = try await harness.untilItEnds()
        XCTAssertEqual(outcome.termination, .exited(3))
        XCTAssertNil(outcome.protocolError)
        XCTAssertEqual(sink.records.count, 1, "what it wrote before it exited is taken")
    }

    func testStopEndsAnAdapterThatIgnoresItWithSIGTERMAndOneThatIgnoresThatWithSIGKILL() async throws {
        let ignoring = try Harness(configuration: ["ignoreStop": true], sink: CollectingSink(), stopTimeout: .milliseconds(300))
        let first = try await ignoring.whileRunning { try await ignoring.wait("the hello") { ignoring.logs.contains("speaks protocol 1") } }
        XCTAssertEqual(first.termination, .signalled(15))
        XCTAssertTrue(ignoring.logs.contains("the adapter did not exit within 0.3 s of stop: SIGTERM"))
        let stubborn = try Harness(configuration: ["ignoreStop": true, "ignoreTerm": true], sink: CollectingSink(), stopTimeout: .milliseconds(300))
        let second = try await stubborn.whileRunning { try await stubborn.wait("the hello") { stubborn.logs.contains("speaks protocol 1") } }
        XCTAssertEqual(second.termination, .signalled(9))
        XCTAssertTrue(stubborn.logs.contains("SIGKILL"))
    }

    /// A flood is slowed by the bus, not buffered: while the sink holds its batch and the queue
    /// is full, the run stops reading, so the adapter's writes block and most of its lines are
    /// still unread; released, every reading arrives once, and the checkpoint is committed with
    /// them and acknowledged.
    func testAFloodIsHeldBackByTheFullQueueAndEveryReadingArrivesOnce() async throws {
        let count = 20_000
        let sink = CollectingSink(batchSize: 100, holdBatches: true)
        let harness = try Harness(configuration: ["flood": count], sink: sink, queue: QueueConfiguration(capacity: 200, policy: .block))
        _ = try await harness.whileRunning {
            try await harness.wait("the sink holding a batch") { sink.isHoldingBatch }
            try await Task.sleep(for: .milliseconds(500))
            let readWhileHeld = harness.events.count
            XCTAssertLessThan(readWhileHeld, count / 2, "the run stopped reading while the queue was full")
            sink.release()
            try await harness.wait("every reading", seconds: 60) {
                if sink.isHoldingBatch { sink.release() }
                return sink.records.count == count
            }
        }
        XCTAssertEqual(Set(sink.records.map(\.id)).count, count, "each once")
    }

    /// As root, the adapter runs as the configured user with that user's groups, in its
    /// directory, with the environment it was given and nothing else of the gateway's.
    func testTheAdapterRunsAsItsUserInItsDirectoryWithOnlyItsEnvironment() async throws {
        guard getuid() == 0 else { throw XCTSkip("changing the adapter's user needs root; this test runs as uid \(getuid())") }
        let nobody = try ChildProcess.User.named("nobody")
        setenv("HEALTHGATE_TEST_SECRET", "leaked", 1)
        defer { unsetenv("HEALTHGATE_TEST_SECRET") }
        let script = #"printf '{"type":"hello","protocol":1,"adapter":"who"}\n{"type":"log","message":"uid=%s gid=%s dir=%s secret=%s given=%s"}\n' "$(id -u)" "$(id -g)" "$(pwd)" "${HEALTHGATE_TEST_SECRET:-none}" "$GIVEN"; exec cat > /dev/null"#
        let settings = AdapterSettings(
            executable: "/bin/sh", arguments: ["sh", "-c", script], environment: ["PATH=/usr/bin:/bin", "GIVEN=yes"], directory: "/tmp",
            user: nobody)
        let logs = RecordingLogSink()
        let bus = SampleBus(sinks: [(name: "sink", queue: QueueConfiguration(), accepts: { _ in true }, status: nil)])
        let board = StatusBoard()
        let status = board.register(name: "who", kind: "exec", role: .source)
        let context = SourceContext(
            publisher: SamplePublisher(bus: bus, status: status), logger: Logger(label: "who", sink: logs, level: .debug), clock: SystemClock(),
            status: status)
        let running = Task { try await AdapterRun(settings: settings, name: "who", gateway: "test", ids: SampleIDGenerator(), context: context).run() }
        let deadline = Date().addingTimeInterval(10)
        while !logs.contains("adapter: uid="), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        running.cancel()
        let outcome = try await running.value
        XCTAssertEqual(outcome.termination, .exited(0))
        XCTAssertTrue(
            logs.contains("adapter: uid=\(nobody.uid) gid=\(nobody.gid) dir=/tmp secret=none given=yes"),
            logs.entries.map(\.message).joined(separator: "\n"))
    }

    func testACheckpointIsCommittedWithItsReadingsAndAcknowledgedThenHandedBackInTheNextHello() async throws {
        let store = try await HealthStore.open(path: path)
        let environment = TestEnvironment.make(directory: directory, store: store)
        let sink = try SQLiteSink(settings: .init(batchSize: 1000, batchWindow: .milliseconds(50)), environment: environment)
        let harness = try Harness(configuration: ["flood": 20], sink: sink)
        _ = try await harness.whileRunning {
            try await harness.wait("the acknowledgement") { harness.gatewayLines.contains(#"{"state":{"flooded":20},"type":"ack"}"#) }
        }
        let stored = try await store.samples(of: .heartRate)
        XCTAssertEqual(stored.count, 20)
        let again = try Harness(configuration: [:], sink: sink)
        _ = try await again.whileRunning { try await again.wait("the hello") { !again.gatewayLines.isEmpty } }
        XCTAssertTrue(again.gatewayLines[0].contains(#""checkpoint":{"flooded":20}"#), again.gatewayLines[0])
        await store.close()
    }
}
