import Foundation
import GatewayTesting
import HealthModel
import SampleBus
import Workouts
import XCTest

/// Persistence across a gateway restart, and the controller's two roles on a real gateway bus.
final class RestartAndBusTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = try TestEnvironment.temporaryDirectory("workouts-restart")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    func makeController(_ clock: ManualClock, log: RecordingLogSink = RecordingLogSink()) -> WorkoutController {
        WorkoutController(
            profile: scriptedProfile, stateDirectory: directory, clock: clock, ids: SampleIDGenerator(seed: 7),
            logger: Logger(label: "workouts", sink: log, level: .debug))
    }

    func testRestartWhileRunningKeepsAccumulating() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let first = makeController(clock)
        try first.start(activity: .running)
        first.ingest([s.heartRate(130, at: 0), s.steps(10, from: 0, to: 5)])
        s.move(to: 5); first.ingest([s.heartRate(150, at: 5)])
        first.checkpoint()
        let file = directory.appendingPathComponent("workout-session.json")
        XCTAssertTrue(FileManager.default.fileExists(atPath: file.path))
        let before = first.status()

        // The gateway restarts 3 s later: a new controller on the same state directory.
        s.move(to: 8)
        let log = RecordingLogSink()
        let second = makeController(clock, log: log)
        let restored = second.status()
        XCTAssertEqual(restored.state, .running)
        XCTAssertTrue(restored.restored)
        XCTAssertEqual(restored.workoutID, before.workoutID)
        XCTAssertEqual(restored.steps, 10)
        XCTAssertEqual(restored.heartRate.maximum, 150)
        XCTAssertEqual(restored.elapsedSeconds, 8, "still running through the restart")
        XCTAssertTrue(log.contains("restored workout \(try XCTUnwrap(before.workoutID)) after a restart: running, running"), "\(log.entries.map(\.message))")

        // It keeps accumulating.
        s.move(to: 10); second.ingest([s.heartRate(160, at: 10), s.steps(7, from: 5, to: 10)])
        s.move(to: 12)
        let final = try await second.end()
        XCTAssertEqual(final.steps, 17)
        XCTAssertEqual(final.heartRate.maximum, 160)
        XCTAssertEqual(final.elapsedSeconds, 12)
        // 130 for 5 s + 150 for 5 s + 160 for 2 s
        XCTAssertEqual(final.zoneSeconds, [0, 5, 5, 2, 0])
        let workout = try XCTUnwrap(second.pendingWorkouts.first)
        XCTAssertEqual(workout.sampleIDs.count, 5)
        XCTAssertEqual(workout.metadata["healthgate.restoredAfterRestart"], .bool(true))
    }

    func testRestartWhilePausedStaysPausedAndStateChangesAreSavedAtOnce() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let first = makeController(clock)
        try first.start(activity: .cycling)
        s.move(to: 20)
        try first.lap()
        s.move(to: 30)
        try first.pause()  // saved now, no checkpoint needed

        s.move(to: 100)
        let second = makeController(clock)
        var status = second.status()
        XCTAssertEqual(status.state, .paused)
        XCTAssertEqual(status.elapsedSeconds, 30, "paused time does not count, before or after the restart")
        XCTAssertEqual(status.laps, 1)
        try second.resume()
        s.move(to: 110)
        status = second.status()
        XCTAssertEqual(status.elapsedSeconds, 40)
        try await second.end()
        XCTAssertEqual(second.pendingWorkouts.first?.events.map(\.type), [.lap, .pause, .resume])

        // An ended workout waiting for the bus survives a restart too.
        let third = makeController(clock)
        XCTAssertEqual(third.pendingWorkouts.count, 1)
        XCTAssertEqual(third.status().state, .notStarted)
    }

    func testUnreadableStateFileIsMovedAsideAndLogged() throws {
        let file = directory.appendingPathComponent("workout-session.json")
        try Data("{ not json".utf8).write(to: file)
        let log = RecordingLogSink()
        let controller = makeController(ManualClock(), log: log)
        XCTAssertEqual(controller.status().state, .notStarted)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.path))
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("workout-session.json.corrupt-") }
        XCTAssertEqual(aside.count, 1)
        XCTAssertTrue(log.entries.contains { $0.level == .error && $0.message.contains("unreadable") })
    }

    func testUnwritableStateDirectoryIsLoggedAndCounted() throws {
        // The state "directory" is a regular file, so nothing can be written under it.
        let blocker = directory.appendingPathComponent("not-a-directory")
        try Data().write(to: blocker)
        let log = RecordingLogSink()
        let controller = WorkoutController(
            profile: UserProfile(), stateDirectory: blocker, clock: ManualClock(), ids: SampleIDGenerator(seed: 1),
            logger: Logger(label: "workouts", sink: log))
        XCTAssertEqual(try controller.start(activity: .running).state, .running, "the workout still runs")
        XCTAssertEqual(controller.persistenceFailures, 1)
        XCTAssertTrue(log.entries.contains { $0.level == .error && $0.message.contains("cannot save the workout session") })
    }

    /// The controller on a real gateway: a scripted source publishes heart rate on the bus, the
    /// controller's sink role collects it, and its source role publishes the ended workout to a
    /// store that accepts workouts.
    func testGatewayFeedsTheBuilderAndStoresThePublishedWorkout() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let controller = makeController(clock)
        try controller.start(activity: .running)
        let records = [s.heartRate(140, at: 0), s.heartRate(150, at: 1), s.steps(3, from: 0, to: 1)]
        let store = CollectingSink()
        let gateway = Gateway(
            sources: [
                ConfiguredSource(name: "script", kind: "script", source: ScriptedSource(records: records)),
                ConfiguredSource(name: "workouts-publisher", kind: "workouts", source: controller),
            ],
            sinks: [
                ConfiguredSink(name: "workouts", kind: "workouts", queue: QueueConfiguration(), sink: controller),
                ConfiguredSink(name: "store", kind: "collect", queue: QueueConfiguration(), sink: store),
            ],
            clock: clock, logger: Logger(label: "gateway", sink: RecordingLogSink()))
        let shutdown = ShutdownSignal()
        let running = Task { await gateway.run(shutdown: shutdown) }

        try await waitUntil("the builder collected the stream") { controller.status().steps == 3 }
        s.move(to: 2)
        let final = try await controller.end()
        XCTAssertEqual(final.heartRate.maximum, 150)
        try await waitUntil("the store received the workout") {
            store.records.contains { $0.kind == .workout }
        }
        guard case .workout(let workout)? = store.records.first(where: { $0.kind == .workout }) else {
            return XCTFail("no workout")
        }
        XCTAssertEqual(workout.id, final.workoutID)
        XCTAssertEqual(Set(workout.sampleIDs), Set(records.map(\.id)))
        XCTAssertTrue(controller.pendingWorkouts.isEmpty, "published, so no longer pending")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("workout-session.json").path))
        _ = shutdown.requestStop()
        await running.value
    }

    func testControlHandlers() async throws {
        let clock = ManualClock()
        let controller = makeController(clock)
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
