import Foundation
import GatewayTesting
import HealthModel
import SQLite
import HealthStore
import SQLiteStore
import GatewayRuntime
import SampleBus
import Synchronization
import Workouts
import WorkoutRuntime
import WorkoutsTesting
import XCTest

/// The workout in progress in the SQLite store across a gateway restart or crash, and the
/// controller's two roles on a real gateway bus.
///
/// A "crash" here is a controller that is dropped without ending its workout, with samples it
/// collected live that the store never committed; the next controller on the same file must
/// rebuild exactly what the store holds.
final class RestartAndBusTests: TemporaryDirectoryTestCase {
    override class var directoryPrefix: String { "workouts-restart" }

    /// A controller on its own store over the file, as after a restart of the gateway.
    func makeController(
        _ clock: ManualClock, log: RecordingLogSink = RecordingLogSink(), store: HealthStore? = nil
    ) throws -> WorkoutController {
        WorkoutController(
            profile: scriptedProfile, store: StoredWorkoutJournal(store: try store ?? HealthStore(path: path), clock: clock), clock: clock,
            ids: SampleIDGenerator(seed: 7), logger: Logger(label: "workouts", sink: log, level: .debug))
    }

    /// Runs a gateway as the executable wires a workout controller: `records` and the
    /// controller's published workouts are its sources, the controller and `store` its sinks.
    func runGateway(
        feeding records: [HealthRecord], to controller: WorkoutController, storingIn store: any SampleSink,
        clock: ManualClock
    ) -> (shutdown: ShutdownSignal, running: Task<Void, Never>) {
        let gateway = Gateway.feeding(
            controller, from: ConfiguredSource(name: "script", kind: "script", source: ScriptedSource(records: records)),
            storingIn: ConfiguredSink(name: "store", kind: "collect", queue: QueueConfiguration(), sink: store),
            clock: clock, logger: Logger(label: "gateway", sink: RecordingLogSink()))
        let shutdown = ShutdownSignal()
        return (shutdown, Task { await gateway.run(shutdown: shutdown) })
    }

    /// Stands in for the SQLite sink: commits `records` in one transaction.
    func commit(_ records: [HealthRecord]) async throws {
        try await HealthStore(path: path).write(records)
    }

    /// A workout on a store that commits its samples keeps only its recent ones in memory
    /// (``WorkoutController/keptSeconds``); `status`, a lap's answer and the end read the others
    /// back, so they equal those of a workout that kept everything (the same stream on a
    /// volatile store), and so does the stored workout's sample list.
    func testALongWorkoutReadsItsDroppedSamplesBackForTheStatusAndTheEnd() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let stored = try makeController(clock)
        let whole = WorkoutController(
            profile: scriptedProfile, store: VolatileWorkoutStore(), clock: clock, ids: SampleIDGenerator(seed: 7),
            logger: Logger(label: "workouts", sink: RecordingLogSink(), level: .debug))
        try await stored.start(activity: .running)
        try await whole.start(activity: .running)
        let seconds = Int(4 * WorkoutController.keptSeconds)
        var collected = 0
        for second in 1...seconds {
            s.move(to: Double(second))
            let batch = [s.heartRate(100 + Double((second * 2) % 90), at: Double(second))]
            try await commit(batch)
            collected += stored.ingest(batch)
            whole.ingest(batch)
            if second == seconds / 2 {
                let (a, b) = (try await stored.lap(), try await whole.lap())
                XCTAssertEqual(a.heartRate, b.heartRate)
                XCTAssertEqual(a.zoneSeconds, b.zoneSeconds)
            }
        }
        XCTAssertEqual(collected, seconds)
        let (now, reference) = (stored.status(), whole.status())
        XCTAssertEqual(now.heartRate, reference.heartRate)
        XCTAssertEqual(now.zoneSeconds, reference.zoneSeconds)
        XCTAssertEqual(now.gaps, reference.gaps)
        XCTAssertEqual(stored.boardStatus().zoneSeconds, whole.boardStatus().zoneSeconds, "the live figures count the dropped samples")
        XCTAssertGreaterThan(reference.zoneSeconds.filter { $0 > 10 }.count, 2, "zones were crossed")
        s.move(to: Double(seconds) + 1)
        let (end, wholeEnd) = (try await stored.end(), try await whole.end())
        XCTAssertEqual(end.heartRate, wholeEnd.heartRate)
        XCTAssertEqual(end.zoneSeconds, wholeEnd.zoneSeconds)
        XCTAssertEqual(end.energyKilocalories, wholeEnd.energyKilocalories)
        // No bus here: the finished workouts wait to be published.
        let (finished, wholeFinished) = (try XCTUnwrap(stored.pendingWorkouts.first), try XCTUnwrap(whole.pendingWorkouts.first))
        XCTAssertEqual(finished.statistics(for: .heartRate)?.sampleCount, seconds, "every sample counted, the dropped ones too")
        XCTAssertEqual(finished.statistics, wholeFinished.statistics)
    }

    func testACrashWhileRunningRebuildsTheWorkoutFromTheCommittedSamples() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let first = try makeController(clock)
        try await first.start(activity: .running)
        let committed = [s.heartRate(130, at: 0), s.steps(10, from: 0, to: 5)]
        first.ingest(committed)
        try await commit(committed)
        s.move(to: 5)
        let hr150 = s.heartRate(150, at: 5)
        first.ingest([hr150])
        try await commit([hr150])
        // Collected live but never committed (in the sink's batch window at the crash): lost.
        first.ingest([s.heartRate(200, at: 6)])
        // Committed, but the controller's own queue had not delivered it yet: kept.
        let hr140 = s.heartRate(140, at: 7)
        try await commit([hr140])
        let before = first.status()
        XCTAssertEqual(before.heartRate.maximum, 200)

        // The gateway is killed and starts again 1 s later: a new controller on the same file.
        s.move(to: 8)
        let log = RecordingLogSink()
        let second = try makeController(clock, log: log)
        try await second.restore()
        let restored = second.status()
        XCTAssertEqual(restored.state, .running)
        XCTAssertTrue(restored.restored)
        XCTAssertEqual(restored.workoutID, before.workoutID)
        XCTAssertEqual(restored.steps, 10)
        XCTAssertEqual(restored.heartRate.maximum, 150, "the uncommitted 200 is gone, the committed 140 is there")
        XCTAssertEqual(restored.heartRate.minimum, 130)
        XCTAssertEqual(restored.elapsedSeconds, 8, "still running through the restart")
        XCTAssertTrue(
            log.contains("restored workout \(try XCTUnwrap(before.workoutID)) after a restart: running, running"),
            "\(log.entries.map(\.message))")

        // It keeps accumulating.
        s.move(to: 10)
        let more = [s.heartRate(160, at: 10), s.steps(7, from: 5, to: 10)]
        second.ingest(more)
        try await commit(more)
        s.move(to: 12)
        let final = try await second.end()
        XCTAssertEqual(final.steps, 17)
        XCTAssertEqual(final.heartRate.maximum, 160)
        XCTAssertEqual(final.elapsedSeconds, 12)
        // 130 for 5 s, 150 for 2 s, 140 for 3 s, 160 for 2 s (zones 120/140/160/…).
        XCTAssertEqual(final.zoneSeconds, [0, 5, 5, 2, 0])
        let workout = try XCTUnwrap(second.pendingWorkouts.first)
        let heartRates = (committed + [hr150, hr140] + more).filter { record in
            if case .quantity(let sample) = record { return sample.type == .heartRate }
            return false
        }
        XCTAssertEqual(workout.statistics(for: .heartRate)?.sampleCount, heartRates.count, "every committed heart rate, once")
        XCTAssertEqual(workout.metadata["healthgate.restoredAfterRestart"], .bool(true))
    }

    /// A strap signed in to a running class starts its wearer's workout at its first beat, a
    /// date taken from the bus at full precision; the store keeps microseconds (rounded to the
    /// nearest), so the committed beat may read back a fraction of a microsecond before it. It
    /// is still the workout's first sample.
    func testAWorkoutStartedAtACommittedBeatCollectsThatBeatWhateverTheStoresPrecision() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        // 0.2 µs past a whole microsecond: stored as the microsecond before.
        let firstBeat = s.heartRate(120, at: 2.000_000_2)
        let later = s.heartRate(125, at: 3)
        try await commit([firstBeat, later])
        let firstBeatDate = s.at(2.000_000_2)
        let stored = try await HealthStore(path: path, access: .readOnly).samples(of: .heartRate)
        XCTAssertLessThan(try XCTUnwrap(stored.first).startDate, firstBeatDate, "the case this test is about")
        s.move(to: 5)
        let controller = try makeController(clock)
        try await controller.start(activity: .running, startDate: firstBeatDate)
        try await controller.end()
        let workout = try XCTUnwrap(controller.pendingWorkouts.first)
        XCTAssertEqual(workout.statistics(for: .heartRate)?.sampleCount, 2, "the first beat and the later one")
        XCTAssertLessThanOrEqual(workout.startDate, try XCTUnwrap(stored.first).startDate)
    }

    func testARestartWhilePausedStaysPausedAndEveryCommandIsDurableWhenAnswered() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let first = try makeController(clock)
        try await first.start(activity: .cycling)
        s.move(to: 20)
        try await first.lap()
        s.move(to: 30)
        try await first.pause()  // committed before it returned: no checkpoint exists

        s.move(to: 100)
        let second = try makeController(clock)
        try await second.restore()
        var status = second.status()
        XCTAssertEqual(status.state, .paused)
        XCTAssertEqual(status.elapsedSeconds, 30, "paused time does not count, before or after the restart")
        XCTAssertEqual(status.laps, 1)
        try await second.resume()
        s.move(to: 110)
        status = second.status()
        XCTAssertEqual(status.elapsedSeconds, 40)
        try await second.end()
        let ended = try XCTUnwrap(second.pendingWorkouts.first)
        XCTAssertEqual(ended.events.map(\.type), [.lap, .pause, .resume])

        // Ended but not stored yet (no sink took it): the next start publishes it again.
        let third = try makeController(clock)
        try await third.restore()
        XCTAssertEqual(third.pendingWorkouts.map(\.id), [ended.id])
        XCTAssertEqual(third.pendingWorkouts.first?.events, ended.events)
        XCTAssertEqual(third.pendingWorkouts.first?.duration, ended.duration)
        XCTAssertEqual(third.status().state, .notStarted)

        // The transaction that stores the workout removes it from the workouts in progress.
        try await commit([.workout(ended)])
        let fourth = try makeController(clock)
        try await fourth.restore()
        XCTAssertTrue(fourth.pendingWorkouts.isEmpty)
        let stored = try await HealthStore(path: path, access: .readOnly).workout(id: ended.id)
        XCTAssertEqual(stored?.workout.events.map(\.type), [.lap, .pause, .resume])
    }

    func testAStoreThatCannotCommitRefusesTheCommandAndChangesNothing() async throws {
        // A store whose journal cannot take a row: its table was dropped behind its back.
        let store = try HealthStore(path: path)
        try SQLiteConnection(path: path).execute("DROP TABLE live_workout_events")
        let controller = WorkoutController(
            profile: UserProfile(), store: StoredWorkoutJournal(store: store, clock: ManualClock()),
            clock: ManualClock(), ids: SampleIDGenerator(seed: 1), logger: Logger(label: "workouts", sink: RecordingLogSink()))
        do {
            try await controller.start(activity: .running)
            XCTFail("a command the store cannot commit must not be acknowledged")
        } catch {
            XCTAssertEqual(error.code, .persistence)
            XCTAssertTrue(error.message.contains("live_workout_events"), error.message)
        }
        XCTAssertEqual(controller.status().state, .notStarted)
    }

    /// The controller on a real gateway: a scripted source publishes heart rate on the bus, the
    /// controller's sink role collects it, and its source role publishes the ended workout to the
    /// SQLite sink, whose transaction also removes the workout in progress.
    func testGatewayFeedsTheBuilderAndStoresThePublishedWorkout() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        // One store for the controller and the sink, as in the gateway: `end` answers once the
        // sink has committed the workout, which the store signals to its own users.
        let healthStore = try HealthStore(path: path)
        let controller = try makeController(clock, store: healthStore)
        try await controller.start(activity: .running)
        let records = [s.heartRate(140, at: 0), s.heartRate(150, at: 1), s.steps(3, from: 0, to: 1)]
        let store = try SQLiteSink(
            settings: .init(batchSize: 500, batchWindow: .zero),
            environment: TestEnvironment.make(name: "sqlite", clock: clock, directory: directory, store: healthStore))
        let (shutdown, running) = runGateway(feeding: records, to: controller, storingIn: store, clock: clock)

        try await waitUntil("the builder collected the stream") { controller.status().steps == 3 }
        s.move(to: 2)
        let final = try await controller.end()
        XCTAssertEqual(final.heartRate.maximum, 150)
        let reader = try HealthStore(path: path, access: .readOnly)
        let id = try XCTUnwrap(final.workoutID)
        let stored = try await reader.workout(id: id)
        XCTAssertNotNil(stored, "end answers once the store has the workout")
        XCTAssertEqual(stored?.samples.count, 3, "found by the workout's time, types and devices")
        XCTAssertTrue(controller.pendingWorkouts.isEmpty, "published, so no longer pending")
        let next = try makeController(clock)
        try await next.restore()
        XCTAssertTrue(next.pendingWorkouts.isEmpty, "stored, so no longer in progress in the store")
        _ = shutdown.requestStop()
        await running.value
    }

    func testControlHandlers() async throws {
        let clock = ManualClock()
        let controller = try makeController(clock)
        let handlers = controller.controlHandlers()
        XCTAssertEqual(Set(handlers.keys), [
            "workout.start", "workout.pause", "workout.resume", "workout.lap", "workout.marker",
            "workout.activity", "workout.end", "workout.status",
        ])
        func call(_ name: String, _ arguments: JSONValue = .object([:])) async throws -> WorkoutSnapshot {
            let handler = try XCTUnwrap(handlers[name])
            return try await handler(arguments).decode(WorkoutSnapshot.self)
        }
        do {
            _ = try await call("workout.start", .object(["activity": .string("skydiving")]))
            XCTFail("unknown activity must throw")
        } catch let error as WorkoutError {
            XCTAssertEqual(error.code, .invalidArgument)
            XCTAssertTrue(error.message.contains("running"), "lists the known activities")
        }
        var snapshot = try await call("workout.start", .object([
            "activity": .string("running"), "devices": .array([.string("AA:BB:CC:DD:EE:FF")]),
        ]))
        XCTAssertEqual(snapshot.state, .running)
        XCTAssertEqual(snapshot.activityType, .running)
        clock.advance(by: .seconds(10))
        snapshot = try await call("workout.lap")
        XCTAssertEqual(snapshot.laps, 1)
        snapshot = try await call("workout.pause")
        XCTAssertEqual(snapshot.state, .paused)
        snapshot = try await call("workout.resume")
        XCTAssertEqual(snapshot.state, .running)
        snapshot = try await call("workout.activity", .object(["activity": .string("walking")]))
        XCTAssertEqual(snapshot.currentActivityType, .walking)
        snapshot = try await call("workout.status")
        XCTAssertEqual(snapshot.elapsedSeconds, 10)
        snapshot = try await call("workout.end")
        XCTAssertEqual(snapshot.state, .ended)
        // The status JSON has the documented keys.
        let json = try await XCTUnwrap(handlers["workout.status"])(.object([:]))
        for key in ["state", "elapsedSeconds", "heartRate", "zoneSeconds", "gaps", "gapSeconds", "inGap", "laps"] {
            XCTAssertNotNil(json[key], "missing \(key) in \(json)")
        }
    }
}

/// Publishes a fixed list of records once, then returns (a source that is done).
struct ScriptedSource: SampleSource {
    let records: [HealthRecord]

    func run(context: SourceContext) async throws {
        await context.publisher.publish(records)
    }
}

/// A store that runs `during` while it commits an entry: what the sink role does in that moment.
final class HookedStore: WorkoutStateStoreDecorator {
    let inner = VolatileWorkoutStore()
    let during: @Sendable (WorkoutAction) -> Void

    init(during: @escaping @Sendable (WorkoutAction) -> Void) {
        self.during = during
    }

    func append(_ entries: [WorkoutJournalEntry], from index: Int, of definition: WorkoutDefinition) throws(WorkoutError) {
        for entry in entries { during(entry.action) }
        try inner.append(entries, from: index, of: definition)
    }
}

extension RestartAndBusTests {
    /// The live state is not locked while the store commits: samples collected in that moment
    /// are kept when they belong (before the end) and dropped when they do not (after a pause).
    func testSamplesCollectedWhileACommandCommitsAreJudgedByTheCommittedState() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let beforeEnd = s.heartRate(140, at: 19.5)
        let afterPause = s.heartRate(190, at: 10.5)
        let controllerBox = Mutex<WorkoutController?>(nil)
        let store = HookedStore { action in
            let controller = controllerBox.withLock { $0 }
            switch action {
            case .pause: controller?.ingest([afterPause])
            case .end: controller?.ingest([beforeEnd])
            default: break
            }
        }
        let controller = WorkoutController(
            profile: scriptedProfile, store: store, clock: clock, ids: SampleIDGenerator(seed: 5),
            logger: Logger(label: "workouts", sink: RecordingLogSink()))
        controllerBox.withLock { $0 = controller }
        try await controller.start(activity: .running)
        controller.ingest([s.heartRate(120, at: 1)])
        s.move(to: 10)
        try await controller.pause()
        XCTAssertEqual(controller.status().heartRate.maximum, 120, "the sample after the pause was dropped")
        s.move(to: 15)
        try await controller.resume()
        s.move(to: 20)
        let final = try await controller.end()
        XCTAssertEqual(final.heartRate.maximum, 140, "the sample collected while the end was committed counts")
        XCTAssertEqual(controller.pendingWorkouts.first?.statistics(for: .heartRate)?.sampleCount, 2)
    }
}

extension RestartAndBusTests {
    /// Whether the store holds an ended workout is answered from the store: true once it does,
    /// false when the wait runs out, and an error, never "not stored yet", when the store cannot
    /// be read (here its anchors table was dropped behind its back).
    func testTheWaitForAStoredWorkoutAnswersFromTheStoreAndReportsAStoreItCannotRead() async throws {
        let clock = ManualClock()
        let store = try HealthStore(path: path)
        let journal = StoredWorkoutJournal(store: store, clock: clock)
        let ids = SampleIDGenerator(seed: 3)
        let workout = Workout(
            id: ids.next(), activityType: .running, startDate: Date(timeIntervalSince1970: 1_800_000_000),
            endDate: Date(timeIntervalSince1970: 1_800_000_060), duration: 60)
        try await store.write([.workout(workout)])
        let stored = try await journal.waitUntilStored(workout.id, timeout: .seconds(10))
        XCTAssertTrue(stored)

        let missing = ids.next()
        let waiting = Task { try await journal.waitUntilStored(missing, timeout: .seconds(10)) }
        try await clock.waitForSleepers(2)
        clock.advance(by: .seconds(10))
        let timedOut = try await waiting.value
        XCTAssertFalse(timedOut, "not stored within the timeout")

        try SQLiteConnection(path: path).execute("DROP TABLE anchors")
        do {
            let answer = try await journal.waitUntilStored(missing, timeout: .seconds(10))
            XCTFail("answered \(answer) for a store that cannot be read")
        } catch {
            XCTAssertEqual(error.code, .persistence)
            XCTAssertTrue(error.message.contains(path), error.message)
            XCTAssertTrue(error.message.contains("\(missing)"), error.message)
            XCTAssertTrue(error.message.contains("anchors"), "the store's own reason: \(error.message)")
        }
    }

    /// `workout end` hears a store that cannot tell whether it holds the ended workout as a
    /// persistence error saying the workout ended, not as an answer after a wait that ran out;
    /// the workout is ended and handed over all the same.
    func testAnEndWhoseStoreCannotBeReadAnswersWithAnError() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let store = UnreadableJournal()
        let log = RecordingLogSink()
        let controller = WorkoutController(
            profile: scriptedProfile, store: store, clock: clock, ids: SampleIDGenerator(seed: 7),
            logger: Logger(label: "workouts", sink: log, level: .debug))
        try await controller.start(activity: .running)
        let collected = CollectingSink()
        let (shutdown, running) = runGateway(
            feeding: [s.heartRate(140, at: 0)], to: controller, storingIn: collected, clock: clock)
        try await waitUntil("the builder collected the stream") { controller.status().heartRate.current == 140 }
        s.move(to: 2)
        let handlers = controller.controlHandlers()
        do {
            let answer = try await XCTUnwrap(handlers["workout.end"])(.object([:]))
            XCTFail("answered \(answer)")
        } catch let error as WorkoutError {
            XCTAssertEqual(error.code, .persistence)
            XCTAssertEqual(
                error.message,
                "the workout ended, but cannot tell whether the workout store /unreadable.sqlite holds workout "
                    + "\(try XCTUnwrap(store.waitedFor.withLock { $0 })): disk I/O error")
        }
        XCTAssertEqual(controller.status().state, .ended, "the end was committed")
        try await waitUntil("the ended workout handed to the bus") {
            collected.records.contains { if case .workout = $0 { true } else { false } }
        }
        XCTAssertTrue(log.entries.contains { $0.level == .error && $0.message.contains("disk I/O error") }, "\(log.entries)")
        _ = shutdown.requestStop()
        await running.value
    }
}

/// A journal kept in memory whose store cannot be read when an end waits for the stored workout.
final class UnreadableJournal: WorkoutStateStoreDecorator {
    let inner = VolatileWorkoutStore()
    /// The workout the end waited for.
    let waitedFor = Mutex<SampleID?>(nil)

    func waitUntilStored(_ id: SampleID, timeout: Duration) async throws(WorkoutError) -> Bool {
        waitedFor.withLock { $0 = id }
        throw WorkoutError(.persistence, "cannot tell whether the workout store /unreadable.sqlite holds workout \(id): disk I/O error")
    }
}
