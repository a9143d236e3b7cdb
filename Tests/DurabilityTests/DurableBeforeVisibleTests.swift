import AsyncPrimitives
import Foundation
import GatewayRuntime
import GatewayTesting
import HealthModel
import HealthStore
import RemoteSinkKit
import SampleBus
import SQLiteStore
import SQLiteTesting
import Synchronization
import Workouts
import WorkoutRuntime
import WorkoutsTesting
import XCTest

/// The store's durability rule (nothing leaves the box before the transaction that holds it is
/// on stable storage), checked at the one moment it is about: while a commit waits in its sync
/// of the write-ahead log (``WALSyncGate`` holds it there), its frames are written but not
/// durable. A follower must not have sent it, a reader must not see it, and an answer that
/// says it is stored (`workout end`, `participant assign`) must not have come; once the sync
/// goes through, all of them happen.
///
/// With `synchronous=NORMAL` on the writer a commit syncs nothing, so it returns, and readers
/// see it, without ever reaching the gate: each test then fails, saying so.
final class DurableBeforeVisibleTests: XCTestCase {
    var directory: URL!
    var gate: WALSyncGate!
    var store: HealthStore!
    var receiver: RecordingReceiver!
    var following: Task<Void, any Error>!
    let followerStop = ShutdownSignal()
    var path: String { directory.appendingPathComponent("samples.sqlite").path }

    override func setUp() async throws {
        directory = try TestEnvironment.temporaryDirectory("durability")
        gate = WALSyncGate(gating: directory.path)
        store = try HealthStore(path: path)
        receiver = RecordingReceiver()
        let follower = Follower(
            name: "remote", store: store, receiver: receiver,
            settings: FollowerSettings(
                batchSize: 100, batchInterval: .zero, maxInFlight: 1, follow: FollowConfiguration(), retry: RetryConfiguration()),
            random: { 0.5 })
        let context = FollowerContext(
            logger: Logger(label: "remote", sink: RecordingLogSink()), clock: SystemClock(),
            status: StatusBoard().register(name: "remote", kind: "recording", role: .sink),
            stopRequest: StopRequest(followerStop), storeSettled: { true })
        following = Task { try await follower.run(context: context) }
    }

    override func tearDown() async throws {
        gate?.release()
        followerStop.requestStop()
        _ = try? await following?.value
        await store?.close()
        store = nil
        gate?.uninstall()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` in a task whose return is noted in `returned`.
    func started<T: Sendable>(
        _ returned: AsyncCondition<Bool>, _ body: @escaping @Sendable () async throws -> T
    ) -> Task<T, any Error> {
        Task {
            defer { returned.set(true) }
            return try await body()
        }
    }

    /// Waits until a commit waits at the gate, or `returned` says the call that commits came
    /// back first: then the commit was answered without a sync of the WAL, and the test fails
    /// with `what`.
    func waitForTheHeldSync(or returned: AsyncCondition<Bool>, _ what: String) async throws -> Bool {
        let gate = try XCTUnwrap(self.gate)
        try await waitUntil("a commit held in its sync of the WAL, or \(what) answered") {
            gate.waitingSyncs.value >= 1 || returned.value
        }
        guard gate.waitingSyncs.value >= 1 else {
            XCTFail("\(what) answered without syncing the write-ahead log: answered, and readable, before it was durable")
            return false
        }
        return true
    }

    func testARecordIsReadAndSentOnlyOnceItsCommitIsOnDisk() async throws {
        let (gate, store, receiver) = (try XCTUnwrap(gate), try XCTUnwrap(store), try XCTUnwrap(receiver))
        let script = Script(clock: ManualClock())
        // Steps: a plain sample each (heart rates would grow one series, named by the first).
        let first = script.steps(10, from: 0, to: 1)
        try await store.write([first])
        try await waitUntil("the follower sent the first record") { receiver.sentIDs.contains(first.id) }
        let before = try await store.latestAnchor()

        gate.hold()
        let record = script.steps(12, from: 1, to: 2)
        let returned = AsyncCondition(false)
        let writing = started(returned) { try await store.write([record]) }
        guard try await waitForTheHeldSync(or: returned, "the write") else { return }

        let page = try await store.changes(since: before)
        XCTAssertTrue(page.added.isEmpty, "a reader sees a commit that is not on disk: \(page.added.map(\.id))")
        let latest = try await store.latestAnchor()
        XCTAssertEqual(latest, before, "the latest anchor moved before the commit was durable")
        XCTAssertFalse(receiver.sentIDs.contains(record.id), "the follower sent a record that is not on disk")
        XCTAssertFalse(returned.value, "the write returned before its commit was durable")

        gate.release()
        let summary = try await writing.value
        XCTAssertEqual(summary.inserted, 1)
        let after = try await store.changes(since: before)
        XCTAssertEqual(after.added.map(\.id), [record.id])
        try await waitUntil("the follower sent the record") { receiver.sentIDs.contains(record.id) }
    }

    /// `workout end` answers once the store holds the workout: through the journal's commit of
    /// the end, then the `sqlite` sink's commit of the workout, each held at the gate in turn.
    func testWorkoutEndAnswersOnlyOnceTheEndAndTheStoredWorkoutAreOnDisk() async throws {
        let (gate, store, receiver) = (try XCTUnwrap(gate), try XCTUnwrap(store), try XCTUnwrap(receiver))
        let clock = ManualClock()
        let script = Script(clock: clock)
        let workouts = try makeWorkouts(clock)
        let gateway = try makeGateway(workouts, clock: clock)
        let stop = ShutdownSignal()
        let running = Task { await gateway.run(shutdown: stop) }
        defer { stop.requestStop() }

        _ = try await workouts.handle(.start(activity: .running), for: .all)
        for second in 0..<5 {
            script.move(to: Double(second))
            let beat = [script.heartRate(120 + Double(second), at: Double(second))]
            try await store.write(beat)
            workouts.ingest(beat)
        }
        script.move(to: 5)

        gate.hold()
        let returned = AsyncCondition(false)
        let ending = started(returned) { try await workouts.handle(.end, for: .all) }
        guard try await waitForTheHeldSync(or: returned, "workout end") else { return }
        XCTAssertFalse(returned.value, "workout end answered before its end was durable")
        XCTAssertEqual(try store.workoutJournal().first?.entries.last?.action, .start, "the end is readable before it is durable")

        // The end goes through; the ended workout goes to the bus and the sink commits it.
        gate.releaseWaiting()
        try await waitUntil("the sink's commit of the workout held in its sync, or workout end answered") {
            gate.waitingSyncs.value >= 1 || returned.value
        }
        XCTAssertFalse(returned.value, "workout end answered before the stored workout was durable")
        let readable = try await store.workouts()
        XCTAssertEqual(readable.count, 0, "a reader sees a workout that is not on disk")
        XCTAssertFalse(receiver.sentKinds.contains(.workout), "the follower sent a workout that is not on disk")

        gate.release()
        let answer = try await ending.value
        let id = try XCTUnwrap(answer.workouts.first?.workoutID)
        let stored = try await store.workout(id: id)
        XCTAssertNotNil(stored, "end answers once the store holds the workout")
        try await waitUntil("the follower sent the workout") { receiver.sentIDs.contains(id) }
        stop.requestStop()
        await running.value
    }

    /// `participant assign` (and a sign-in on the board, which assigns the same way) answers
    /// once the assignment is on disk.
    func testAnAssignmentAnswersOnlyOnceItIsOnDisk() async throws {
        let (gate, store) = (try XCTUnwrap(gate), try XCTUnwrap(store))
        let workouts = try makeWorkouts(ManualClock())
        gate.hold()
        let returned = AsyncCondition(false)
        let assigning = started(returned) { try await workouts.assign(device: "0A0B0C0D", to: "Bo") }
        guard try await waitForTheHeldSync(or: returned, "participant assign") else { return }
        XCTAssertFalse(returned.value, "the assignment answered before it was durable")
        XCTAssertFalse(try store.storedParticipantAssignments().contains { $0.device == "0A0B0C0D" }, "readable before durable")

        gate.release()
        let roster = try await assigning.value
        XCTAssertEqual(roster.owner(of: Device(localIdentifier: "0A0B0C0D"))?.name, "Bo")
        XCTAssertTrue(try store.storedParticipantAssignments().contains { $0.device == "0A0B0C0D" })
    }

    /// The gateway's workouts as it runs them: Ana wears the script's strap.
    func makeWorkouts(_ clock: ManualClock) throws -> ParticipantWorkouts {
        let roster = try ParticipantRoster.decode(
            .array([.object(["name": .string("Ana"), "devices": .array([.string(Script.strap.localIdentifier ?? "")])])]),
            defaultProfile: scriptedProfile)
        return ParticipantWorkouts(
            roster: roster, store: StoredWorkoutJournal(store: store, clock: clock), clock: clock, ids: SampleIDGenerator(seed: 3),
            logger: Logger(label: "workouts", sink: RecordingLogSink()))
    }

    /// The workouts on a bus with the `sqlite` sink on the store, as the gateway runs them.
    func makeGateway(_ workouts: ParticipantWorkouts, clock: ManualClock) throws -> Gateway {
        let sink = try SQLiteSink(
            settings: .init(batchSize: 500, batchWindow: .zero),
            environment: TestEnvironment.make(name: "sqlite", clock: clock, directory: directory, store: store))
        return Gateway(
            sources: [ConfiguredSource(name: "workouts-publisher", kind: "workouts", source: workouts)],
            sinks: [
                ConfiguredSink(name: "workouts", kind: "workouts", queue: QueueConfiguration(), sink: workouts),
                ConfiguredSink(name: "sqlite", kind: "sqlite", queue: QueueConfiguration(), sink: sink),
            ],
            clock: clock, logger: Logger(label: "gateway", sink: RecordingLogSink()))
    }
}

/// A remote receiver that acknowledges every batch and remembers what it was sent.
final class RecordingReceiver: RemoteReceiver {
    private let sent = Mutex<[FollowedChange]>([])

    var destination: String { "recording" }
    var payloadIdentity: String { "recording" }
    var sentIDs: Set<SampleID> { Set(sent.withLock { $0.map(\.id) }) }
    var sentKinds: Set<HealthRecordKind> { Set(sent.withLock { $0.map(\.kind) }) }

    func prepare(context: FollowerContext) async {}

    func accepts(_ change: FollowedChange) -> Bool { true }

    func send(_ batch: FollowerBatch, context: FollowerContext) async -> DeliveryOutcome {
        sent.withLock { $0 += batch.changes }
        return .delivered
    }
}
