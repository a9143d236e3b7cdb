import AsyncPrimitives
import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import RemoteSinkKit
import GatewayRuntime
import SampleBus
import Synchronization
import XCTest

/// A receiver that records every batch it is sent and answers what the test scripts, optionally
/// holding each send until the test releases it.
final class ScriptedReceiver: RemoteReceiver {
    struct Sent: Sendable {
        var key: String
        var payloadIdentity: String
        var after: Int64
        var through: Int64
        var changes: [FollowedChange]
        var at = Date()
    }

    private struct State {
        var sent: [Sent] = []
        var answers: [DeliveryOutcome] = []
        /// Answers for the batches starting after an anchor, before `answers`.
        var answersAfter: [Int64: [DeliveryOutcome]] = [:]
        var inFlight = 0
        var mostInFlight = 0
    }

    private let state = Mutex(State())
    /// Sends wait until it holds true (`true` unless the test holds them).
    let gate = AsyncCondition(true)
    /// Changes it refuses (an HTTP 400 for any batch holding one).
    let refused: Mutex<Set<SampleID>> = Mutex([])
    let accepting: @Sendable (FollowedChange) -> Bool
    let payloadIdentity: String

    init(payloadIdentity: String = "scripted", accepting: @escaping @Sendable (FollowedChange) -> Bool = { _ in true }) {
        self.payloadIdentity = payloadIdentity
        self.accepting = accepting
    }

    var destination: String { "scripted" }
    var sent: [Sent] { state.withLock { $0.sent } }
    var mostInFlight: Int { state.withLock { $0.mostInFlight } }
    /// The changes of the batches answered `.delivered`, in the order they were sent.
    var deliveredChanges: [FollowedChange] { deliveredStorage.withLock { $0 } }
    private let deliveredStorage = Mutex<[FollowedChange]>([])

    /// Answers the next sends with `outcomes`, in order; then `.delivered`.
    func answer(_ outcomes: DeliveryOutcome...) {
        state.withLock { $0.answers += outcomes }
    }

    /// Answers the next sends of the batch starting after `anchor` with `outcomes`, in order.
    func answer(after anchor: Int64, _ outcomes: DeliveryOutcome...) {
        state.withLock { $0.answersAfter[anchor, default: []] += outcomes }
    }

    func prepare(context: FollowerContext) async {}

    func accepts(_ change: FollowedChange) -> Bool { accepting(change) }

    func send(_ batch: FollowerBatch, context: FollowerContext) async -> DeliveryOutcome {
        state.withLock {
            $0.sent.append(
                Sent(key: batch.key, payloadIdentity: batch.payloadIdentity, after: batch.after, through: batch.through, changes: batch.changes))
            $0.inFlight += 1
            $0.mostInFlight = max($0.mostInFlight, $0.inFlight)
        }
        try? await gate.wait { $0 }
        let refusedIDs = refused.withLock { $0 }
        let outcome: DeliveryOutcome = state.withLock { state in
            state.inFlight -= 1
            if batch.changes.contains(where: { refusedIDs.contains($0.id) }) {
                return .rejected(status: 400, answer: "refused")
            }
            if var own = state.answersAfter[batch.after], !own.isEmpty {
                let outcome = own.removeFirst()
                state.answersAfter[batch.after] = own
                return outcome
            }
            return state.answers.isEmpty ? .delivered : state.answers.removeFirst()
        }
        if outcome == .delivered { deliveredStorage.withLock { $0 += batch.changes } }
        return outcome
    }
}

final class FollowerTests: StoreTestCase {
    var store: HealthStore!
    var ids: SampleIDGenerator!

    override func setUp() async throws {
        try await super.setUp()
        store = try await HealthStore.open(path: path)
        ids = makeIDs()
    }

    override func tearDown() async throws {
        await store?.close()
        store = nil
        try await super.tearDown()
    }

    struct Running {
        var task: Task<Void, any Error>
        var shutdown: ShutdownSignal
        var status: StatusReporter
        var logs: RecordingLogSink

        /// Requests a graceful stop (the store is settled) and waits for the follower to return.
        func stop() async throws {
            shutdown.requestStop()
            try await task.value
        }
    }

    func settings(
        batchSize: Int = 10, interval: Duration = .zero, inFlight: Int = 1, follow: FollowConfiguration = FollowConfiguration()
    ) -> FollowerSettings {
        FollowerSettings(
            batchSize: batchSize, batchInterval: interval, maxInFlight: inFlight, follow: follow,
            retry: RetryConfiguration(initialDelaySeconds: 1, maxDelaySeconds: 8, jitter: 0))
    }

    func start(
        _ receiver: ScriptedReceiver, name: String = "remote", settings: FollowerSettings? = nil,
        clock: any GatewayClock = SystemClock(), legacyOutbox: String? = nil
    ) -> Running {
        let logs = RecordingLogSink()
        let status = StatusBoard().register(name: name, kind: "scripted", role: .sink)
        let shutdown = ShutdownSignal()
        let follower = Follower(
            name: name, store: store, receiver: receiver, settings: settings ?? self.settings(), legacyOutbox: legacyOutbox,
            random: { 0.5 })
        let context = FollowerContext(
            logger: Logger(label: name, sink: logs, level: .debug), clock: clock, status: status,
            stopRequest: StopRequest(shutdown), storeSettled: { true })
        let task = Task { try await follower.run(context: context) }
        return Running(task: task, shutdown: shutdown, status: status, logs: logs)
    }

    /// `count` readings a second apart of a type the store keeps one sample each (heart-rate
    /// variability: no series policy), so that each reading is a change of its own.
    func readings(_ count: Int, from offset: Int = 0) throws -> [HealthRecord] {
        try (offset..<offset + count).map { index in
            .quantity(try QuantitySample(
                id: ids.next(), type: Self.readingType, quantity: Quantity(40 + Double(index % 40), .millisecond),
                start: at(Double(index)), end: at(Double(index)), device: StoreTestCase.strap))
        }
    }

    static let readingType = QuantityType.heartRateVariabilitySDNN

    func cursor(_ name: String = "remote") async throws -> Int64 {
        try await Self.cursor(store, name)
    }

    static func cursor(_ store: HealthStore, _ name: String = "remote") async throws -> Int64 {
        try await store.follower(name)?.anchor ?? -1
    }

    /// Waits until follower `name`'s committed cursor reaches the store's latest anchor.
    func waitUntilSent(_ name: String = "remote", _ running: Running? = nil) async throws {
        let store = self.store!
        let latest = try await store.latestAnchor()
        do {
            try await waitUntil("\(name) reaches anchor \(latest)") { try await Self.cursor(store, name) == latest }
        } catch {
            let cursor = try await Self.cursor(store, name)
            XCTFail("\(name) at \(cursor) of \(latest); log:\n" + (running?.logs.entries.map { "\($0.level) \($0.message)" }.joined(separator: "\n") ?? ""))
            throw error
        }
    }

    /// Every key the receivers were sent names one payload: one payload identity, one list of
    /// changes.
    func assertOneKeyNamesOnePayload(_ receivers: ScriptedReceiver..., file: StaticString = #filePath, line: UInt = #line) {
        var payloads: [String: Set<[String]>] = [:]
        for sent in receivers.flatMap(\.sent) {
            payloads[sent.key, default: []].insert([sent.payloadIdentity] + sent.changes.map { "\($0.anchor) \($0.id) \($0.isDeletion)" })
        }
        for (key, seen) in payloads where seen.count > 1 {
            XCTFail("the key \(key) named \(seen.count) payloads", file: file, line: line)
        }
    }

    // MARK: Tests

    func testEveryChangeIsSentOnceInAnchorOrderAndTheCursorIsCommitted() async throws {
        let records = try readings(25)
        try await store.write(records)
        let receiver = ScriptedReceiver()
        let running = start(receiver)
        try await waitUntilSent()
        try await running.stop()
        XCTAssertEqual(receiver.sent.map(\.changes.count), [10, 10, 5])
        XCTAssertEqual(receiver.deliveredChanges.map(\.id), records.map(\.id))
        XCTAssertEqual(receiver.sent.map(\.after), [0, 10, 20])
        XCTAssertEqual(running.status.current?.records, 25)
        // Nothing left begun: every range was acknowledged.
        let begun = try await store.followerBatches("remote")
        XCTAssertTrue(begun.isEmpty)
        // Later commits are sent as they come.
        let more = try readings(3, from: 25)
        let again = start(receiver)
        try await store.write(more)
        try await waitUntilSent()
        try await again.stop()
        XCTAssertEqual(receiver.deliveredChanges.suffix(3).map(\.id), more.map(\.id))
    }

    func testDeletionsAndNewVersionsTravelAfterTheFirstVersion() async throws {
        let records = try readings(3)
        try await store.write(records)
        let series = try HeartbeatSeriesSample(
            id: ids.next(), start: at(100), end: at(101),
            beats: [Heartbeat(timeSinceSeriesStart: 0.5, precededByGap: false)], device: strap,
            metadata: [.syncIdentifier: .string("series-1"), .syncVersion: .integer(1)])
        try await store.write([.heartbeatSeries(series)])
        let receiver = ScriptedReceiver()
        let running = start(receiver)
        try await waitUntilSent()
        // The series grows (a later version, the same uuid), and a sample is deleted.
        let grown = try HeartbeatSeriesSample(
            id: series.id, start: at(100), end: at(102),
            beats: [Heartbeat(timeSinceSeriesStart: 0.5, precededByGap: false), Heartbeat(timeSinceSeriesStart: 1.4, precededByGap: false)],
            device: strap, metadata: [.syncIdentifier: .string("series-1"), .syncVersion: .integer(2)])
        try await store.write([.heartbeatSeries(grown)])
        _ = try await store.delete(.ids([records[1].id]))
        try await waitUntilSent()
        try await running.stop()
        let later = Array(receiver.deliveredChanges.dropFirst(4))
        XCTAssertEqual(later.count, 2)
        guard case .stored(.heartbeatSeries(let sent), _) = later.first else { return XCTFail("\(later)") }
        XCTAssertEqual(sent.id, series.id)
        XCTAssertEqual(sent.beats.count, 2)
        XCTAssertEqual(sent.metadata.syncVersion, 2)
        guard case .deleted(let deletion) = later.last else { return XCTFail("\(later)") }
        XCTAssertEqual(deletion.id, records[1].id)
        XCTAssertEqual(deletion.kind, .quantity)
        XCTAssertEqual(deletion.type, Self.readingType.identifier)
    }

    /// A batch begun before a crash is rebuilt from its committed range: the same changes in the
    /// same order under the same key.
    func testABatchSentAgainAfterACrashIsTheSameRequest() async throws {
        try await store.write(try readings(20))
        let receiver = ScriptedReceiver()
        receiver.gate.set(false)
        let crashed = start(receiver, settings: settings(inFlight: 2))
        try await waitUntil("two batches in flight") { receiver.sent.count == 2 }
        // A crash: the task goes, nothing is acknowledged.
        crashed.task.cancel()
        _ = try? await crashed.task.value
        let stayed = try await cursor()
        XCTAssertEqual(stayed, 0)
        let begun = try await store.followerBatches("remote")
        XCTAssertEqual(begun.map(\.after), [0, 10])
        // More records committed meanwhile do not change the batches begun.
        try await store.write(try readings(5, from: 20))
        receiver.gate.set(true)
        let restarted = start(receiver, settings: settings(inFlight: 2))
        try await waitUntilSent()
        try await restarted.stop()
        let first = Array(receiver.sent.prefix(2))
        let again = Array(receiver.sent.dropFirst(2).prefix(2))
        XCTAssertEqual(again.map(\.key), first.map(\.key))
        XCTAssertEqual(again.map { $0.changes.map(\.id) }, first.map { $0.changes.map(\.id) })
        XCTAssertEqual(again.map(\.through), first.map(\.through))
        XCTAssertEqual(Set(receiver.deliveredChanges.map(\.id)).count, 25)
        assertOneKeyNamesOnePayload(receiver)
    }

    /// Issue 56: a batch begun before a crash whose objects moved on since (a heartbeat series
    /// stored again in a later version, a sample deleted) is rebuilt with the changes its range
    /// still holds, under the key of those changes: never under the key it was first sent
    /// under, which names the changes it carried then. The later versions follow in a later
    /// batch.
    func testARebuiltBatchThatLostChangesIsSentUnderTheKeyOfWhatItCarries() async throws {
        let samples = try readings(8)
        let series = try HeartbeatSeriesSample(
            id: ids.next(), start: at(100), end: at(101),
            beats: [Heartbeat(timeSinceSeriesStart: 0.5, precededByGap: false)], device: strap,
            metadata: [.syncIdentifier: .string("series-1"), .syncVersion: .integer(1)])
        try await store.write(samples + [.heartbeatSeries(series)])
        let receiver = ScriptedReceiver()
        receiver.gate.set(false)
        let crashed = start(receiver)
        try await waitUntil("the batch in flight") { receiver.sent.count == 1 }
        crashed.task.cancel()
        _ = try? await crashed.task.value
        let first = try XCTUnwrap(receiver.sent.first)
        XCTAssertEqual(first.changes.count, 9)
        let begun = try await store.followerBatches("remote")
        XCTAssertEqual(begun.map(\.key), [first.key])

        // While the gateway is down, the series grows and a sample is deleted: both move on to
        // later anchors, out of the batch's range.
        let grown = try HeartbeatSeriesSample(
            id: series.id, start: at(100), end: at(102),
            beats: [Heartbeat(timeSinceSeriesStart: 0.5, precededByGap: false), Heartbeat(timeSinceSeriesStart: 1.4, precededByGap: false)],
            device: strap, metadata: [.syncIdentifier: .string("series-1"), .syncVersion: .integer(2)])
        try await store.write([.heartbeatSeries(grown)])
        _ = try await store.delete(.ids([samples[3].id]))

        receiver.gate.set(true)
        let restarted = start(receiver)
        try await waitUntilSent()
        try await restarted.stop()
        let rebuilt = try XCTUnwrap(receiver.sent.dropFirst().first)
        XCTAssertEqual(rebuilt.after, first.after)
        XCTAssertEqual(rebuilt.through, first.through)
        XCTAssertEqual(rebuilt.changes.map(\.id), samples.enumerated().filter { $0.offset != 3 }.map(\.element.id))
        XCTAssertNotEqual(rebuilt.key, first.key, "the rebuilt batch carries fewer changes under the key of the first")
        XCTAssertEqual(rebuilt.key, BatchKey.key(for: rebuilt.changes, payloadIdentity: receiver.payloadIdentity))
        XCTAssertTrue(restarted.logs.contains("is sent under a new key, \(rebuilt.key) (it was \(first.key))"))
        // The later versions follow, in a later batch.
        let later = receiver.deliveredChanges.suffix(2)
        XCTAssertEqual(later.map(\.id), [series.id, samples[3].id])
        XCTAssertEqual(later.map(\.isDeletion), [false, true])
        assertOneKeyNamesOnePayload(receiver)
    }

    /// Issue 56: the receiver's payload identity is part of the key. A batch begun before a stop
    /// goes to a receiver whose settings changed since (another format) under another key, with
    /// the same changes; to one configured the same way, under the same key.
    func testARebuiltBatchForAReceiverConfiguredOtherwiseHasAnotherKey() async throws {
        try await store.write(try readings(5))
        let native = ScriptedReceiver(payloadIdentity: "format=native")
        native.answer(.retry(reason: "HTTP 503", status: 503, retryAfter: nil))
        let first = start(native)
        try await waitUntil("the refusal") { native.sent.count == 1 }
        try await first.stop()
        let again = ScriptedReceiver(payloadIdentity: "format=native")
        again.answer(.retry(reason: "HTTP 503", status: 503, retryAfter: nil))
        let second = start(again)
        try await waitUntil("the batch sent again") { again.sent.count == 1 }
        try await second.stop()
        let fhir = ScriptedReceiver(payloadIdentity: "format=fhir-r4 patient=Patient/1")
        let third = start(fhir)
        try await waitUntilSent()
        try await third.stop()
        let sent = [native.sent[0], again.sent[0], fhir.sent[0]]
        XCTAssertEqual(Set(sent.map { $0.changes.map(\.id) }).count, 1, "the same range, the same changes")
        XCTAssertEqual(sent[1].key, sent[0].key, "the same changes to a receiver configured the same way")
        XCTAssertNotEqual(sent[2].key, sent[0].key, "the same key for another payload")
        XCTAssertEqual(sent[2].key, BatchKey.key(for: sent[2].changes, payloadIdentity: "format=fhir-r4 patient=Patient/1"))
        assertOneKeyNamesOnePayload(native, again, fhir)
    }

    /// Issue 43: the oldest of three batches is refused with a Retry-After and the two after it
    /// are acknowledged; a stop while it waits leaves the cursor before it. The next start sends
    /// it alone, under its key and with its changes, after the pause, and not the two the
    /// receiver has.
    func testAStopWhileTheOldestBatchWaitsKeepsTheCursorBeforeItAndTheRestartSendsOnlyIt() async throws {
        try await store.write(try readings(30))
        let receiver = ScriptedReceiver()
        // Long enough that a loaded machine checks and stops within it (the status clears when it ends).
        receiver.answer(after: 0, .retry(reason: "HTTP 503", status: 503, retryAfter: .seconds(3)))
        let running = start(receiver, settings: settings(inFlight: 3))
        let store = self.store!
        // The status shows the pause after the store committed it: wait for both.
        try await waitUntil("the later batches acknowledged, the pause committed and shown") {
            let paused = try await store.follower("remote")?.pausedUntil
            return receiver.deliveredChanges.count == 20 && paused != nil
                && running.status.current?.details["pausedUntil"] != nil
        }
        let follower = try await store.follower("remote")
        let pausedUntil = try XCTUnwrap(follower?.pausedUntil)
        XCTAssertEqual(running.status.current?.details["pausedUntil"], RFC3339.string(from: pausedUntil))
        try await running.stop()
        XCTAssertTrue(running.logs.contains("stopping while"))
        let stayed = try await cursor()
        XCTAssertEqual(stayed, 0, "the cursor passed the batch that waits")
        let begun = try await store.followerBatches("remote")
        XCTAssertEqual(begun.map(\.after), [0, 10, 20])
        XCTAssertEqual(begun.map(\.acknowledged), [false, true, true])
        let refused = try XCTUnwrap(receiver.sent.first { $0.after == 0 })
        XCTAssertEqual(begun.first?.key, refused.key)

        let restarted = start(receiver, settings: settings(inFlight: 3))
        try await waitUntilSent()
        try await restarted.stop()
        let resent = Array(receiver.sent.dropFirst(3))
        XCTAssertEqual(resent.map(\.key), [refused.key], "only the batch given up is sent again")
        XCTAssertEqual(resent.first?.changes.map(\.id), refused.changes.map(\.id))
        XCTAssertGreaterThanOrEqual(resent.first?.at ?? .distantPast, pausedUntil, "sent again before the receiver's pause ended")
        XCTAssertEqual(Set(receiver.deliveredChanges.map(\.id)).count, 30)
        assertOneKeyNamesOnePayload(receiver)
    }

    /// Issue 64: a Retry-After answered while the gateway is stopping (the stop's drain) is
    /// committed like any other, and the next start waits for it before it sends.
    func testARetryAfterAnsweredDuringTheStopBindsTheNextStart() async throws {
        try await store.write(try readings(10))
        let receiver = ScriptedReceiver()
        receiver.gate.set(false)
        receiver.answer(.retry(reason: "HTTP 503", status: 503, retryAfter: .seconds(2)))
        let running = start(receiver)
        try await waitUntil("the batch sent and held") { receiver.sent.count == 1 }
        running.shutdown.requestStop()
        // The follower takes the stop in before the answer comes (it wakes on it at once).
        try await Task.sleep(for: .milliseconds(200))
        receiver.gate.set(true)
        try await running.task.value
        XCTAssertEqual(running.status.current?.lastError, "delivery failed: HTTP 503; stopping", "answered during the stop")
        let follower = try await store.follower("remote")
        let pausedUntil = try XCTUnwrap(follower?.pausedUntil, "the pause was not committed")
        XCTAssertGreaterThan(pausedUntil, Date().addingTimeInterval(1))

        let restarted = start(receiver)
        try await waitUntilSent()
        try await restarted.stop()
        XCTAssertTrue(restarted.logs.contains("asked for a pause before the last stop"))
        let resent = try XCTUnwrap(receiver.sent.dropFirst().first)
        XCTAssertGreaterThanOrEqual(resent.at, pausedUntil, "sent again before the receiver's pause ended")
    }

    /// Up to `maxInFlight` batches wait for their answers at once; the cursor moves only past the
    /// oldest unanswered one.
    func testBatchesInFlightAndTheCursorStaysBeforeTheOldestUnanswered() async throws {
        try await store.write(try readings(50))
        let receiver = ScriptedReceiver()
        receiver.gate.set(false)
        let running = start(receiver, settings: settings(inFlight: 3))
        try await waitUntil("three batches in flight") { receiver.sent.count == 3 }
        let before = try await cursor()
        XCTAssertEqual(before, 0)
        receiver.gate.set(true)
        try await waitUntilSent()
        try await running.stop()
        XCTAssertEqual(receiver.mostInFlight, 3)
        XCTAssertEqual(receiver.deliveredChanges.count, 50)
    }

    func testARefusedChangeIsNarrowedDownAndKeptAsADeadLetterThenRetried() async throws {
        let records = try readings(8)
        try await store.write(records)
        let receiver = ScriptedReceiver()
        receiver.refused.withLock { $0 = [records[5].id] }
        let running = start(receiver)
        try await waitUntilSent()
        XCTAssertEqual(Set(receiver.deliveredChanges.map(\.id)), Set(records.map(\.id)).subtracting([records[5].id]))
        XCTAssertEqual(receiver.sent.map(\.changes.count), [8, 4, 4, 2, 1, 1, 2])
        let halvesKeys = Set(receiver.sent.map(\.key))
        XCTAssertEqual(halvesKeys.count, 7, "each half has a key of its own")
        var letters = try await store.deadLetters(follower: "remote")
        XCTAssertEqual(letters.map(\.id), [records[5].id])
        XCTAssertEqual(letters.first?.status, 400)
        XCTAssertEqual(letters.first?.type, Self.readingType.identifier)
        XCTAssertNotNil(letters.first?.payload)
        XCTAssertTrue(running.logs.contains("kept as a dead letter"))
        // The operator fixes the receiver and asks for a retry: sent within a poll.
        receiver.refused.withLock { $0 = [] }
        try await store.retryDeadLetters(follower: "remote")
        let store = self.store!
        try await waitUntil(timeout: .seconds(10), "the dead letter is sent and removed") {
            try await store.deadLetters(follower: "remote").isEmpty
        }
        try await running.stop()
        XCTAssertEqual(receiver.deliveredChanges.last?.id, records[5].id)
        letters = try await store.deadLetters()
        XCTAssertTrue(letters.isEmpty)
    }

    /// A growing series refused twice (its dead letter holds version 2 then), then the receiver
    /// is fixed and the series grows again (version 3, delivered as it follows the store): the retry
    /// must leave the receiver with the store's version 3, not send its letters' older versions
    /// after it (the repository ended a version behind the store, with no dead letter left).
    func testARetriedDeadLetterLeavesTheReceiverWithTheObjectsLatestVersion() async throws {
        func series(_ version: Int, beats: Int, id: SampleID) throws -> HealthRecord {
            .heartbeatSeries(try HeartbeatSeriesSample(
                id: id, start: at(100), end: at(100 + Double(beats)),
                beats: (0..<beats).map { Heartbeat(timeSinceSeriesStart: 0.5 + Double($0), precededByGap: false) },
                device: strap, metadata: [.syncIdentifier: .string("series-1"), .syncVersion: .integer(Int64(version))]))
        }
        let id = ids.next()
        let receiver = ScriptedReceiver()
        receiver.refused.withLock { $0 = [id] }
        try await store.write([try series(1, beats: 1, id: id)])
        let running = start(receiver)
        try await waitUntilSent()
        try await store.write([try series(2, beats: 2, id: id)])
        try await waitUntilSent()
        let store = self.store!
        let second = try await store.latestAnchor()
        try await waitUntil(timeout: .seconds(10), "version 2 kept as the dead letter") {
            try await store.deadLetters(follower: "remote").map(\.anchor) == [second]
        }
        receiver.refused.withLock { $0 = [] }
        try await store.write([try series(3, beats: 3, id: id)])
        try await waitUntilSent()
        try await store.retryDeadLetters(follower: "remote")
        try await waitUntil(timeout: .seconds(10), "the dead letters sent and removed") {
            try await store.deadLetters(follower: "remote").isEmpty
        }
        try await running.stop()
        let versions = receiver.deliveredChanges.compactMap { change -> Int64? in
            guard case .stored(.heartbeatSeries(let sent), _) = change, sent.id == id else { return nil }
            return sent.metadata.syncVersion
        }
        XCTAssertEqual(versions.last, 3, "the receiver's last version of the series, in the order received: \(versions)")
    }

    func testRetriesBackOffAndAStopDuringABackoffEndsAtOnceKeepingTheCursor() async throws {
        try await store.write(try readings(4))
        let clock = ManualClock()
        let receiver = ScriptedReceiver()
        receiver.answer(.retry(reason: "HTTP 503", status: 503, retryAfter: nil), .retry(reason: "HTTP 503", status: 503, retryAfter: nil))
        let running = start(receiver, clock: clock)
        // The backoff (1 s, then 2 s) and the idle poll sleep on the clock.
        try await waitUntil("first attempt failed") { receiver.sent.count == 1 }
        try await clock.waitForSleepers(2)
        clock.advance(by: .milliseconds(999))
        XCTAssertEqual(receiver.sent.count, 1, "retried before the backoff ended")
        clock.advance(by: .milliseconds(2))
        try await waitUntil("second attempt") { receiver.sent.count == 2 }
        XCTAssertTrue(running.logs.contains("retry 1 in 1 s"))
        XCTAssertEqual(running.status.current?.lastError?.contains("HTTP 503"), true)
        // Stopping during the second backoff: the follower returns without waiting it out.
        try await running.stop()
        let kept = try await cursor()
        XCTAssertEqual(kept, 0, "nothing was acknowledged")
        XCTAssertTrue(running.logs.contains("sent at the next start"))
    }

    /// A receiver that stays down: what it has not acknowledged outgrows `follow.maxBytes`, and
    /// the oldest whole transactions are skipped, counted and logged once.
    func testAReceiverTooFarBehindSkipsTheOldestChangesLoudly() async throws {
        let clock = ManualClock()
        let receiver = ScriptedReceiver()
        receiver.gate.set(false)
        // Registered first, so that the store counts the bytes of what follows for it.
        let running = start(receiver, settings: settings(follow: FollowConfiguration().with { $0.maxBytes = 4096 }), clock: clock)
        let store = self.store!
        try await waitUntil("registered") { try await store.follower("remote") != nil }
        for chunk in 0..<10 { try await store.write(try readings(10, from: chunk * 10)) }
        // The follower notices at its next poll.
        try await waitUntil("a batch in flight") { receiver.sent.count == 1 }
        clock.advance(by: .seconds(1))
        // Waiting for the backlog within bounds, not for the first skip: a skip may already come
        // while the chunks are written (the window is empty until the first batch is read).
        try await waitUntil("the oldest changes skipped") {
            let cursor = try await Self.cursor(store)
            let within = try await store.backlog(after: cursor).bytes <= 4096
            return (running.status.current?.dropped ?? 0) > 0 && within
        }
        let dropped = running.status.current?.dropped ?? 0
        let now = try await cursor()
        let backlog = try await store.backlog(after: now)
        XCTAssertLessThanOrEqual(backlog.bytes, 4096)
        XCTAssertGreaterThanOrEqual(dropped, 40)
        receiver.gate.set(true)
        try await waitUntilSent()
        try await running.stop()
        let warnings = running.logs.entries.filter { $0.message.contains("too far behind") }
        XCTAssertEqual(warnings.count, 1, "logged once per episode")
        let follower = try await store.follower("remote")
        XCTAssertEqual(follower?.skipped, Int64(dropped))
    }

    func testACursorAboveTheStoresLatestAnchorStartsAgainAtZero() async throws {
        try await store.write(try readings(3))
        _ = try await store.registerFollower("remote", startingAt: .beginning)
        try await store.skip(follower: "remote", to: 500, count: 0)
        let receiver = ScriptedReceiver()
        let running = start(receiver)
        try await waitUntilSent()
        try await running.stop()
        XCTAssertEqual(receiver.deliveredChanges.count, 3)
        XCTAssertTrue(running.logs.contains("the store was replaced"))
    }

    /// A store kept only as the remote sinks' journal prunes what every follower acknowledged,
    /// and keeps tombstones until every follower has them.
    func testAJournalPrunesWhatEveryFollowerAcknowledged() async throws {
        try await store.setRetention(.untilAcknowledged)
        let fast = ScriptedReceiver()
        let slow = ScriptedReceiver()
        slow.gate.set(false)
        let first = start(fast, name: "fast")
        let second = start(slow, name: "slow")
        let store = self.store!
        try await waitUntil("both registered") {
            let fastOne = try await store.follower("fast")
            let slowOne = try await store.follower("slow")
            return fastOne != nil && slowOne != nil
        }
        let records = try readings(12)
        try await store.write(records)
        try await waitUntilSent("fast", first)
        var stored = try await store.changes(since: 0)
        XCTAssertEqual(stored.added.count, 12, "the slow follower still needs them")
        slow.gate.set(true)
        try await waitUntilSent("slow")
        stored = try await store.changes(since: 0)
        XCTAssertTrue(stored.added.isEmpty, "acknowledged by every follower: pruned")
        try await first.stop()
        try await second.stop()
    }

    func testChangesTheReceiverCannotCarryArePassedOver() async throws {
        let records = try readings(4)
        try await store.write(records)
        let receiver = ScriptedReceiver { $0.id != records[1].id }
        let running = start(receiver)
        try await waitUntilSent()
        try await running.stop()
        XCTAssertEqual(receiver.deliveredChanges.map(\.id), [records[0], records[2], records[3]].map(\.id))
    }
}
