import Foundation
import GatewayTesting
import HealthModel
import GatewayRuntime
import SampleBus
import Workouts
import WorkoutRuntime
import WorkoutsTesting
import XCTest

/// Statistics, zones, gaps and energy for scripted streams with pauses and gaps, checked against
/// values computed by hand.
final class LiveStatisticsTests: XCTestCase {
    func makeController(_ clock: ManualClock, profile: UserProfile = scriptedProfile, log: RecordingLogSink = RecordingLogSink()) -> WorkoutController {
        WorkoutController(
            profile: profile, store: VolatileWorkoutStore(), clock: clock, ids: SampleIDGenerator(seed: 7),
            logger: Logger(label: "workouts", sink: log, level: .debug))
    }

    /// A controller on a manual clock with the default profile, and the script that feeds it.
    func makeScriptedController() -> (clock: ManualClock, s: Script, controller: WorkoutController) {
        let clock = ManualClock()
        return (clock, Script(clock: clock), makeController(clock))
    }

    /// The script (seconds after the start):
    ///   HR 130 @0, 150 @5, 170 @10, pause @12, HR 190 @15 (paused: dropped), resume @20,
    ///   HR 150 @22, silence (gap), HR 110 @40, 130 @45, end @50.
    ///   steps 10 (0–5), 8 (10–15: ends in the pause, dropped), 20 (22–30), 12 (45–48);
    ///   distance 50 m (22–30).
    /// Running intervals [0, 12] and [20, 50]: 42 s running.
    func runScript(_ controller: WorkoutController, _ s: Script, lapAt: Double? = nil) async throws -> WorkoutSnapshot {
        try await controller.start(activity: .running)
        controller.ingest([s.heartRate(130, at: 0), s.steps(10, from: 0, to: 5)])
        s.move(to: 5); controller.ingest([s.heartRate(150, at: 5)])
        s.move(to: 10); controller.ingest([s.heartRate(170, at: 10)])
        s.move(to: 12); try await controller.pause()
        s.move(to: 15); controller.ingest([s.heartRate(190, at: 15), s.steps(8, from: 10, to: 15)])
        s.move(to: 20); try await controller.resume()
        s.move(to: 22); controller.ingest([s.heartRate(150, at: 22)])
        s.move(to: 30); controller.ingest([s.steps(20, from: 22, to: 30), s.distance(50, from: 22, to: 30)])
        if let lapAt { s.move(to: lapAt); try await controller.lap() }
        s.move(to: 40); controller.ingest([s.heartRate(110, at: 40)])
        s.move(to: 45); controller.ingest([s.heartRate(130, at: 45)])
        s.move(to: 48); controller.ingest([s.steps(12, from: 45, to: 48)])
        s.move(to: 50)
        return try await controller.end()
    }

    func testScriptedStreamWithPauseAndGap() async throws {
        let (_, s, controller) = makeScriptedController()
        let final = try await runScript(controller, s)

        XCTAssertEqual(final.state, .ended)
        XCTAssertEqual(final.elapsedSeconds, 42, "12 s + 30 s; the 8 s pause is excluded")
        // Counted heart-rate steps (each reading holds until the next, in running time):
        //   130 for 0→5 = 5 s (Z2), 150 for 5→10 = 5 s (Z3),
        //   170 for 10→22 = (12−10) + (22−20) = 4 s (Z4; the pause is not counted),
        //   150 for 22→40 = 18 s > 10 s: a gap, not counted,
        //   110 for 40→45 = 5 s (Z1), 130 for 45→50 = 5 s (Z2).
        XCTAssertEqual(final.zoneSeconds, [5, 10, 5, 4, 0])
        XCTAssertEqual(final.gaps.count, 1)
        XCTAssertEqual(final.gaps.first?.start, s.at(22))
        XCTAssertEqual(final.gaps.first?.end, s.at(40))
        XCTAssertEqual(final.gapSeconds, 18)
        // Time-weighted: (130×5 + 150×5 + 170×4 + 110×5 + 130×5) / 24 = 3280 / 24 = 136.6667
        // (the plain mean of the six readings would be 840 / 6 = 140).
        XCTAssertEqual(try XCTUnwrap(final.heartRate.average), 3280.0 / 24, accuracy: 1e-9)
        XCTAssertEqual(final.heartRate.minimum, 110)
        XCTAssertEqual(final.heartRate.maximum, 170, "the 190 during the pause is not collected")
        XCTAssertEqual(final.steps, 42, "10 + 20 + 12; the 8 steps ending in the pause are dropped")
        XCTAssertEqual(final.distanceMeters, 50)
        // Keytel male, 70 kg, 30 y: kJ/min = 0.6309 × HR − 55.0969 + 13.916 + 6.051 = 0.6309 × HR − 35.1299
        //   130 → 46.8871, 150 → 59.5051, 170 → 72.1231, 110 → 34.2691
        //   kJ = (46.8871 × 10 + 59.5051 × 5 + 72.1231 × 4 + 34.2691 × 5) / 60
        //      = (468.871 + 297.5255 + 288.4924 + 171.3455) / 60 = 1226.2344 / 60 = 20.43724
        //   kcal = 20.43724 / 4.184 = 4.88462
        XCTAssertEqual(try XCTUnwrap(final.energyKilocalories), 1226.2344 / 60 / 4.184, accuracy: 1e-9)
        XCTAssertEqual(final.energySource, .heartRateEquation)

        let workout = try XCTUnwrap(controller.pendingWorkouts.first, "no source role ran: kept pending")
        XCTAssertEqual(workout.duration, 42)
        XCTAssertEqual(workout.startDate, s.at(0))
        XCTAssertEqual(workout.endDate, s.at(50))
        XCTAssertEqual(workout.events.map(\.type), [.pause, .resume])
        XCTAssertEqual(workout.statistics.map(\.sampleCount).reduce(0, +), 6 + 3 + 1 + 6, "6 heart rates, 3 step samples, 1 distance, and the energy from the heart rates")
        XCTAssertEqual(workout.statistics(for: .stepCount)?.sum, 42)
        XCTAssertEqual(workout.statistics(for: .heartRate)?.sampleCount, 6)
        XCTAssertEqual(workout.statistics(for: .heartRate)?.mostRecent, 130)
        XCTAssertEqual(workout.statistics(for: .activeEnergyBurned)?.sum ?? 0, 1226.2344 / 60 / 4.184, accuracy: 1e-9)
        XCTAssertEqual(workout.activities.count, 1)
        XCTAssertEqual(workout.activities.first?.statistics.first { $0.type == .stepCount }?.sum, 42)
        XCTAssertEqual(workout.metadata["healthgate.zone1Seconds"], .double(5))
        XCTAssertEqual(workout.metadata["healthgate.gapCount"], .integer(1))
        XCTAssertEqual(workout.metadata["healthgate.energySource"], .string("heartRateEquation"))
    }

    func testLiveStatusDuringAGapAndZone() async throws {
        let (_, s, controller) = makeScriptedController()
        try await controller.start(activity: .running)
        controller.ingest([s.heartRate(130, at: 0)])
        s.move(to: 5); controller.ingest([s.heartRate(165, at: 5)])
        s.move(to: 8)
        var status = controller.status()
        XCTAssertEqual(status.heartRate.current, 165)
        XCTAssertEqual(status.zone, 4, "165 bpm is 82.5 % of 200")
        XCTAssertFalse(status.inGap)
        XCTAssertEqual(status.elapsedSeconds, 8)
        XCTAssertEqual(status.zoneSeconds, [0, 5, 0, 3, 0])
        // The strap goes silent: 20 s after the last reading the stream is in an open gap,
        // the workout keeps running, and the gap's time is not zone time.
        s.move(to: 25)
        status = controller.status()
        XCTAssertEqual(status.state, .running)
        XCTAssertTrue(status.inGap)
        XCTAssertNil(status.heartRate.current)
        XCTAssertNil(status.zone)
        XCTAssertEqual(status.gaps, [HeartRateGap(start: s.at(5), end: nil, seconds: 20)])
        XCTAssertEqual(status.zoneSeconds, [0, 5, 0, 0, 0])
        // It comes back: the gap closes.
        controller.ingest([s.heartRate(150, at: 25)])
        status = controller.status()
        XCTAssertFalse(status.inGap)
        XCTAssertEqual(status.gaps, [HeartRateGap(start: s.at(5), end: s.at(25), seconds: 20)])
        XCTAssertEqual(status.elapsedSeconds, 25)
    }

    func testNoHeartRateAtAllIsOneGapAndEnergyIsUnavailable() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let controller = makeController(clock, profile: UserProfile(maximumHeartRate: 190))
        try await controller.start(activity: .walking)
        s.move(to: 30)
        controller.ingest([s.steps(40, from: 0, to: 30)])
        let final = try await controller.end()
        XCTAssertEqual(final.gaps, [HeartRateGap(start: s.at(0), end: s.at(30), seconds: 30)])
        XCTAssertNil(final.energyKilocalories, "no profile for the equation and no device energy: unavailable")
        XCTAssertNil(final.energySource)
        let workout = try XCTUnwrap(controller.pendingWorkouts.first)
        let energy = workout.statistics(for: .activeEnergyBurned)
        XCTAssertEqual(energy?.sampleCount, 0)
        XCTAssertNil(energy?.sum, "reported as empty, never invented")
        XCTAssertNil(workout.metadata["healthgate.energySource"])
        XCTAssertEqual(final.steps, 40)
    }

    func testIncompleteProfileFallsBackToDeviceEnergy() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        // No weight: the equation cannot run.
        let controller = makeController(clock, profile: UserProfile(maximumHeartRate: 190, dateOfBirth: "1990-01-01", biologicalSex: .female))
        try await controller.start(activity: .running)
        controller.ingest([s.heartRate(140, at: 0)])
        s.move(to: 5); controller.ingest([s.heartRate(141, at: 5), s.energy(1.5, from: 0, to: 5)])
        s.move(to: 10); controller.ingest([s.heartRate(142, at: 10), s.energy(2.25, from: 5, to: 10)])
        let final = try await controller.end()
        XCTAssertEqual(final.energySource, .device)
        XCTAssertEqual(final.energyKilocalories, 3.75)
    }

    func testDeviceFilterTypesAndDuplicates() async throws {
        let (_, s, controller) = makeScriptedController()
        try await controller.start(activity: .running, devices: ["AA:BB:CC:DD:EE:FF", "Pod"])
        let duplicate = s.heartRate(120, at: 0)
        let collected = controller.ingest([
            duplicate, duplicate,  // redelivered after a sink restart: counted once
            s.heartRate(180, at: 0, device: Script.other),  // another strap: not chosen
            s.steps(5, from: 0, to: 1),  // the pod, chosen by name
        ])
        XCTAssertEqual(collected, 2)
        s.move(to: 1)
        XCTAssertEqual(controller.status().heartRate.maximum, 120)
        XCTAssertEqual(controller.status().steps, 5)
        // A sample from before the start is not part of the workout.
        XCTAssertEqual(controller.ingest([s.heartRate(100, at: -5)]), 0)
        // Heartbeat series from the chosen strap are linked by id; from another strap, not.
        let series = HealthRecord.heartbeatSeries(try HeartbeatSeriesSample(
            id: s.ids.next(), start: s.at(0), end: s.at(1),
            beats: [Heartbeat(timeSinceSeriesStart: 0.5, precededByGap: false)], device: Script.strap))
        let foreign = HealthRecord.heartbeatSeries(try HeartbeatSeriesSample(
            id: s.ids.next(), start: s.at(0), end: s.at(1), beats: [], device: Script.other))
        XCTAssertEqual(controller.ingest([series, foreign]), 1)
        try await controller.end()
        // The workout lists no records: the store finds them by its devices (WorkoutDeviceReadTests).
        XCTAssertEqual(controller.pendingWorkouts.first?.metadata[.workoutDevices], .string("AA:BB:CC:DD:EE:FF,Pod"))
    }

    func testBuilderIsBoundedAndCountsWhatItRefuses() throws {
        let s = Script(clock: ManualClock())
        var session = WorkoutSession(id: s.ids.next(), activityType: .running, firstActivityID: s.ids.next())
        try session.apply(.start, at: s.at(0))
        var builder = LiveWorkoutBuilder()
        XCTAssertTrue(builder.add(s.heartRate(120, at: 1), session: session, capacity: 2))
        XCTAssertTrue(builder.add(s.heartRate(121, at: 2), session: session, capacity: 2))
        XCTAssertFalse(builder.add(s.heartRate(122, at: 3), session: session, capacity: 2))
        XCTAssertEqual(builder.samples.map(\.value), [120, 121])
        XCTAssertEqual(builder.refusedCount, 1)
        // A late sample is kept in time order.
        var ordered = LiveWorkoutBuilder()
        ordered.add(s.heartRate(130, at: 5), session: session)
        ordered.add(s.heartRate(125, at: 3), session: session)
        XCTAssertEqual(ordered.samples.map(\.value), [125, 130])
    }

    func testMultisportActivitiesHaveTheirOwnStatistics() async throws {
        let (_, s, controller) = makeScriptedController()
        try await controller.start(activity: .cycling)
        controller.ingest([s.heartRate(120, at: 0)])
        s.move(to: 5); controller.ingest([s.heartRate(130, at: 5)])
        s.move(to: 10); try await controller.beginNewActivity(.transition)
        s.move(to: 12); try await controller.beginNewActivity(.running)
        controller.ingest([s.heartRate(160, at: 12), s.steps(30, from: 12, to: 20)])
        s.move(to: 20); controller.ingest([s.heartRate(170, at: 20)])
        s.move(to: 22)
        let final = try await controller.end()
        XCTAssertEqual(final.activities, 3)
        XCTAssertEqual(final.currentActivityType, .running)
        let workout = try XCTUnwrap(controller.pendingWorkouts.first)
        XCTAssertEqual(workout.activityType, .cycling)
        XCTAssertEqual(workout.activities.map(\.activityType), [.cycling, .transition, .running])
        let cycling = workout.activities[0].statistics.first { $0.type == .heartRate }
        let running = workout.activities[2].statistics.first { $0.type == .heartRate }
        XCTAssertEqual(cycling?.maximum, 130)
        XCTAssertEqual(running?.minimum, 160)
        XCTAssertEqual(running?.maximum, 170)
        XCTAssertEqual(workout.activities[2].statistics.first { $0.type == .stepCount }?.sum, 30)
        XCTAssertNil(workout.activities[0].statistics.first { $0.type == .stepCount }?.sum)
    }

    func testCommandsWithoutAWorkoutAreTypedErrors() async throws {
        let controller = makeController(ManualClock())
        XCTAssertEqual(controller.status().state, .notStarted)
        func code(_ body: () async throws(WorkoutError) -> WorkoutSnapshot) async -> WorkoutError.Code? {
            do {
                _ = try await body()
                return nil
            } catch {
                return error.code
            }
        }
        var refused = await code { () async throws(WorkoutError) in try await controller.pause() }
        XCTAssertEqual(refused, .noSession)
        refused = await code { () async throws(WorkoutError) in try await controller.end() }
        XCTAssertEqual(refused, .noSession)
        try await controller.start(activity: .running)
        refused = await code { () async throws(WorkoutError) in try await controller.start(activity: .cycling) }
        XCTAssertEqual(refused, .alreadyActive)
        // Pausing twice: the second is ignored, no second pause event.
        try await controller.pause()
        var state = try await controller.pause().state
        XCTAssertEqual(state, .paused)
        state = try await controller.resume().state
        XCTAssertEqual(state, .running)
        state = try await controller.resume().state
        XCTAssertEqual(state, .running)
        try await controller.end()
        XCTAssertEqual(controller.pendingWorkouts.first?.events.map(\.type), [.pause, .resume])
        XCTAssertEqual(controller.status().state, .ended, "status shows the last workout's final state")
        // A new workout may start after the previous one ended.
        state = try await controller.start(activity: .walking).state
        XCTAssertEqual(state, .running)
    }
}
