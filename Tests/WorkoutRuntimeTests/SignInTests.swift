import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import GatewayRuntime
import Workouts
import WorkoutRuntime
import WorkoutsTesting
import XCTest

/// Signing in during a class, with the real SQLite store: a strap nobody wears is offered, an
/// assignment during the class starts the wearer's workout from the strap's first beat (the
/// samples committed before the assignment included), and the class's end frees the strap
/// unless it was kept, also across a restart.
final class SignInTests: TemporaryDirectoryTestCase {
    override class var directoryPrefix: String { "sign-in" }

    static let ana = Device(name: "Ana's strap", localIdentifier: "AA:00:00:00:00:01", radioIdentifier: "AA:00:00:00:00:01")
    static let newcomer = Device(name: "Polar H10 0A0B0C0D", localIdentifier: "0A0B0C0D", radioIdentifier: "0A0B0C0D")
    static let walkIn = Device(name: "ANT+ 4242", localIdentifier: "ant:120:4242", radioIdentifier: "ant:120:4242")

    func makeGroup(_ clock: ManualClock, _ store: HealthStore) throws -> ParticipantWorkouts {
        let roster = try ParticipantRoster.decode(
            .array([.object(["name": .string("Ana"), "devices": .array([.string("AA:00:00:00:00:01")])])]),
            defaultProfile: UserProfile(maximumHeartRate: 190))
        return ParticipantWorkouts(
            roster: roster, store: StoredWorkoutJournal(store: store, clock: clock), clock: clock, ids: SampleIDGenerator(seed: 5),
            logger: Logger(label: "workouts", sink: RecordingLogSink()))
    }

    /// One second of the class: each device's beat, committed to the store and offered to the group.
    func beat(_ s: Script, _ store: HealthStore, _ group: ParticipantWorkouts, at second: Int, _ devices: [(Device, Double)]) async throws {
        s.move(to: Double(second))
        let batch = devices.map { s.heartRate($0.1, at: Double(second), device: $0.0) }
        _ = try await store.write(batch)
        group.ingest(batch)
    }

    func testASignedInStrapsWorkoutStartsAtItsFirstBeatAndTheClassEndFreesIt() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let store = try HealthStore(path: path)
        let group = try makeGroup(clock, store)
        s.move(to: 0)
        let started = try await group.handle(.start(activity: .cycling), for: .all)
        XCTAssertEqual(started.workouts.map(\.participant), ["Ana"])

        // The newcomer's strap beats from second 5, nobody wearing it: a new strap.
        for second in 5...20 {
            try await beat(s, store, group, at: second, [(Self.ana, 120), (Self.newcomer, 100 + Double(second))])
        }
        let offered = group.newStraps()
        XCTAssertEqual(offered.map(\.identity), ["0A0B0C0D"], "Ana's strap is worn, the newcomer's is new")
        XCTAssertEqual(offered.first?.firstBeat, s.at(5))
        XCTAssertEqual(offered.first?.heartRate, 120)
        XCTAssertNil(group.roster.owner(of: Self.newcomer))

        // Signed in (by its id in lower case) to a new member: her workout runs from second 5.
        try await group.assign(device: "0a0b0c0d", to: "Cleo")
        XCTAssertEqual(group.newStraps(), [], "the strap moved off the new straps")
        let cleo = try XCTUnwrap(group.controller(for: "Cleo"))
        let running = cleo.status()
        XCTAssertEqual(running.state, .running)
        XCTAssertEqual(running.activityType, .cycling, "the class's activity")
        XCTAssertEqual(running.startDate, s.at(5), "from the strap's first beat, not from the assignment")
        XCTAssertEqual(running.heartRate.minimum, 105, "the beats committed before the sign-in are hers")
        XCTAssertEqual(group.summaries().first { $0.name == "Cleo" }?.untilClassEnd, ["0a0b0c0d"])
        XCTAssertEqual(try store.storedParticipantAssignments(), [ParticipantAssignment(device: "0a0b0c0d", participant: "Cleo", untilClassEnd: true)])

        // A walk-in kept after the class.
        try await beat(s, store, group, at: 21, [(Self.ana, 120), (Self.newcomer, 121), (Self.walkIn, 90)])
        try await group.assign(device: "ant:120:4242", to: "Dan", keep: true)
        XCTAssertEqual(group.controller(for: "Dan")?.status().startDate, s.at(21))
        for second in 22...30 {
            try await beat(s, store, group, at: second, [(Self.ana, 120), (Self.newcomer, 100 + Double(second)), (Self.walkIn, 95)])
        }

        let ended = try await group.handle(.end, for: .all)
        XCTAssertEqual(ended.workouts.map(\.participant), ["Ana", "Cleo", "Dan"])
        let final = try XCTUnwrap(ended.workouts.first { $0.participant == "Cleo" })
        XCTAssertEqual(final.heartRate.minimum, 105)
        XCTAssertEqual(final.heartRate.maximum, 130)
        XCTAssertEqual(final.elapsedSeconds, 25, accuracy: 0.001, "seconds 5 to 30")

        // The class ended: Cleo's strap is free, Dan's stays.
        XCTAssertNil(group.roster.owner(of: Self.newcomer), "freed")
        XCTAssertNil(group.roster.participant(named: "Cleo"), "only the sign-in made her a participant")
        XCTAssertEqual(group.roster.owner(of: Self.walkIn)?.name, "Dan", "kept")
        XCTAssertEqual(try store.storedParticipantAssignments(), [ParticipantAssignment(device: "ant:120:4242", participant: "Dan")])
        XCTAssertEqual(group.newStraps(), [], "the new straps cleared")
        try await beat(s, store, group, at: 31, [(Self.newcomer, 99)])
        XCTAssertEqual(group.newStraps().map(\.identity), ["0A0B0C0D"], "still beating: new again, for the next class")
    }

    func testASignInSurvivesARestartAndTheClassEndStillFreesIt() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        do {
            let store = try HealthStore(path: path)
            let group = try makeGroup(clock, store)
            s.move(to: 0)
            _ = try await group.handle(.start(activity: .running), for: .all)
            try await beat(s, store, group, at: 3, [(Self.ana, 120), (Self.newcomer, 110)])
            try await group.assign(device: "0A0B0C0D", to: "Cleo")
            await store.close()
        }
        let store = try HealthStore(path: path)
        let group = try makeGroup(clock, store)
        try await group.refreshClass()
        XCTAssertEqual(group.roster.owner(of: Self.newcomer)?.name, "Cleo", "the sign-in is restored")
        XCTAssertEqual(group.signedInUntilClassEnd, ["0A0B0C0D": "Cleo"])
        XCTAssertEqual(group.controller(for: "Cleo")?.status().state, .running)
        s.move(to: 10)
        _ = try await group.handle(.end, for: .all)
        XCTAssertNil(group.roster.owner(of: Self.newcomer), "freed after the restart too")
        XCTAssertEqual(try store.storedParticipantAssignments(), [])
    }

    func testAnAssignmentWithNoClassRunningStaysAndStartsNothing() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let store = try HealthStore(path: path)
        let group = try makeGroup(clock, store)
        try await beat(s, store, group, at: 1, [(Self.newcomer, 100)])
        try await group.assign(device: "0A0B0C0D", to: "Cleo")
        XCTAssertEqual(group.controller(for: "Cleo")?.status().state, .notStarted)
        XCTAssertEqual(try store.storedParticipantAssignments(), [ParticipantAssignment(device: "0A0B0C0D", participant: "Cleo")])
        _ = try await group.handle(.start(activity: .running), for: .all)
        _ = try await group.handle(.end, for: .all)
        XCTAssertEqual(group.roster.owner(of: Self.newcomer)?.name, "Cleo", "made outside a class: it stays")
    }
}
