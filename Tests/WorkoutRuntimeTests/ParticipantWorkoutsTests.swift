import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import GatewayRuntime
import SampleBus
import Workouts
import WorkoutRuntime
import WorkoutsTesting
import XCTest

/// Group workouts: the roster from the configuration, one workout per participant with their own
/// profile and devices, run-time assignments committed to the SQLite store and restored.
final class ParticipantWorkoutsTests: TemporaryDirectoryTestCase {
    override class var directoryPrefix: String { "participants" }

    static let ana = Device(name: "Ana's strap", localIdentifier: "AA:00:00:00:00:01")
    static let ben = Device(name: "Ben's strap", localIdentifier: "BB:00:00:00:00:02")
    static let guest = Device(name: "Guest strap", localIdentifier: "CC:00:00:00:00:03")

    static let configuration: JSONValue = .array([
        .object([
            "name": .string("Ana"), "devices": .array([.string("AA:00:00:00:00:01")]),
            "profile": .object([
                "maximumHeartRate": .number(150), "weightKilograms": .number(60), "dateOfBirth": .string("1990-01-01"),
                "biologicalSex": .string("female"),
            ]),
        ]),
        .object([
            "name": .string("Ben"), "devices": .array([.string("Ben's strap")]),
            "profile": .object(["maximumHeartRate": .number(200)]),
        ]),
    ])

    func makeGroup(_ clock: ManualClock, store: (any WorkoutStateStore & ParticipantAssignmentStore)? = nil) throws -> ParticipantWorkouts {
        let roster = try ParticipantRoster.decode(Self.configuration, defaultProfile: UserProfile(maximumHeartRate: 190))
        return ParticipantWorkouts(
            roster: roster, store: try store ?? StoredWorkoutJournal(store: try HealthStore(path: path), clock: clock), clock: clock,
            ids: SampleIDGenerator(seed: 3), logger: Logger(label: "workouts", sink: RecordingLogSink()))
    }

    func testTheRosterDecodesStrictlyAndNamesTheKeyOfEveryMistake() throws {
        let roster = try ParticipantRoster.decode(Self.configuration, defaultProfile: UserProfile())
        XCTAssertEqual(roster.participants.map(\.name), ["Ana", "Ben"])
        XCTAssertEqual(roster.participant(named: "Ana")?.profile.maximumHeartRate, 150)
        XCTAssertEqual(roster.owner(of: Self.ben)?.name, "Ben", "matched by device name")
        XCTAssertNil(roster.owner(of: Self.guest))

        func keyPath(_ value: JSONValue) -> String? {
            do {
                _ = try ParticipantRoster.decode(value, defaultProfile: UserProfile())
                return nil
            } catch {
                return error.keyPath
            }
        }
        XCTAssertEqual(keyPath(.object([:])), "participants")
        XCTAssertEqual(keyPath(.array([.object(["name": .string("A"), "devises": .array([])])])), "participants[0].devises")
        XCTAssertEqual(keyPath(.array([.object(["name": .string(" ")])])), "participants[0].name")
        XCTAssertEqual(
            keyPath(.array([
                .object(["name": .string("A"), "devices": .array([.string("x")])]),
                .object(["name": .string("B"), "devices": .array([.string("x")])]),
            ])), "participants[1].devices[0]")
        XCTAssertEqual(
            keyPath(.array([.object(["name": .string("A")]), .object(["name": .string("A")])])), "participants[1].name")
        // A device is someone's own or shared, and a user index on a shared device is one person's.
        func shared(_ device: String, _ index: Int? = nil) -> JSONValue {
            .array([.object(["device": .string(device)].merging(index.map { ["userIndex": .number(Double($0))] } ?? [:]) { $1 })])
        }
        XCTAssertEqual(
            keyPath(.array([
                .object(["name": .string("A"), "sharedDevices": shared("x")]), .object(["name": .string("B"), "devices": .array([.string("x")])]),
            ])), "participants[1].devices[0]")
        XCTAssertEqual(
            keyPath(.array([
                .object(["name": .string("A"), "devices": .array([.string("x")])]), .object(["name": .string("B"), "sharedDevices": shared("x")]),
            ])), "participants[1].sharedDevices[0].device")
        XCTAssertEqual(
            keyPath(.array([
                .object(["name": .string("A"), "sharedDevices": shared("x", 1)]), .object(["name": .string("B"), "sharedDevices": shared("x", 1)]),
            ])), "participants[1].sharedDevices[0].userIndex")
        XCTAssertEqual(keyPath(.array([.object(["name": .string("A"), "sharedDevices": shared("x", 255)])])), "participants[0].sharedDevices[0].userIndex")
        let family = try ParticipantRoster.decode(
            .array([
                .object(["name": .string("A"), "sharedDevices": shared("x", 1)]), .object(["name": .string("B"), "sharedDevices": shared("x", 2)]),
            ]), defaultProfile: UserProfile())
        XCTAssertEqual(family.participant(named: "B")?.sharedDevices, [SharedDeviceUse(device: "x", userIndex: 2)])
        // An MQTT topic level is one person's: another's name or topic, or a level with a slash, is refused.
        func topic(_ level: String) -> JSONValue { .object(["mqttTopic": .string(level)]) }
        XCTAssertEqual(
            keyPath(.array([.object(["name": .string("A")]), .object(["name": .string("B"), "identifiers": topic("A")])])),
            "participants[1].identifiers.mqttTopic")
        XCTAssertEqual(
            keyPath(.array([.object(["name": .string("A"), "identifiers": topic("B")]), .object(["name": .string("B")])])),
            "participants[1].name")
        XCTAssertEqual(keyPath(.array([.object(["name": .string("A"), "identifiers": topic("a/b")])])), "participants[0].identifiers.mqttTopic")
        let topics = try ParticipantRoster.decode(
            .array([.object(["name": .string("Ana Lima"), "identifiers": topic("ana-7")])]), defaultProfile: UserProfile())
        XCTAssertEqual(topics.participant(named: "Ana Lima")?.pluginCharacteristics.mqttTopic, "ana-7")
        XCTAssertEqual(
            keyPath(.array([.object(["name": .string("A"), "profile": .object(["weightKilograms": .number(700)])])])),
            "participants[0].profile.weightKilograms")
    }

    func testStartingAllRunsOneWorkoutPerParticipantWithTheirOwnDevicesAndProfile() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let group = try makeGroup(clock)
        let started = try await group.handle(.start(activity: .running), for: .all)
        XCTAssertEqual(started.errors, [])
        XCTAssertEqual(started.workouts.map(\.participant), ["Ana", "Ben"])
        XCTAssertEqual(started.workouts.map(\.state), [.running, .running])

        for second in 0...60 {
            s.move(to: Double(second))
            let batch = [
                s.heartRate(120, at: Double(second), device: Self.ana),
                s.heartRate(120, at: Double(second), device: Self.ben),
                s.heartRate(180, at: Double(second), device: Self.guest),
            ]
            group.main.ingest(batch)
            for name in ["Ana", "Ben"] { group.controller(for: name)?.ingest(batch) }
        }
        let statuses = group.statuses()
        let ana = try XCTUnwrap(statuses["Ana"])
        let ben = try XCTUnwrap(statuses["Ben"])
        // The same 120 bpm is zone 4 of Ana's 150 and zone 2 of Ben's 200; the guest's 180 is in
        // neither workout.
        XCTAssertEqual(ana.zone, 4)
        XCTAssertEqual(ben.zone, 2)
        XCTAssertEqual(ana.heartRate.maximum, 120)
        XCTAssertEqual(ben.heartRate.maximum, 120)
        XCTAssertEqual(ana.energySource, .heartRateEquation, "Ana's profile has everything Keytel needs")
        XCTAssertNil(ben.energyKilocalories, "Ben's profile has no weight: no energy, never a guess")

        let ended = try await group.handle(.end, for: .all)
        XCTAssertEqual(ended.workouts.map(\.state), [.ended, .ended])
        XCTAssertEqual(group.main.status().state, .notStarted, "the gateway's own workout is untouched")
    }

    /// Issue 65: a participant's workout finds its samples by attribution. Ana's strap handed
    /// to Ben during her workout: his effort on it is not hers; the guest strap handed to her
    /// is, though her workout started without it. Alike live and read back at the end.
    func testAParticipantsWorkoutTakesTheReadingsAttributedToThem() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let store = try HealthStore(path: path)
        let group = try makeGroup(clock, store: StoredWorkoutJournal(store: store, clock: clock))
        try await group.restore()
        // As the gateway does: the store's writer attributes by the configured participants.
        try await store.attributeReadings(by: AttributionRoster(group.configuredRoster.participants.map {
            AttributionRoster.Person(name: $0.name, devices: $0.devices, sharedDevices: $0.sharedDevices)
        }))
        _ = try await group.handle(.start(activity: .running), for: .participant("Ana"))
        for second in 0...60 {
            s.move(to: Double(second))
            if second == 31 {
                try await group.assign(device: "AA:00:00:00:00:01", to: "Ben")
                try await group.assign(device: "CC:00:00:00:00:03", to: "Ana")
            }
            let batch = [
                s.heartRate(second < 31 ? 100 : 170, at: Double(second), device: Self.ana),
                s.heartRate(130, at: Double(second), device: Self.guest),
            ]
            try await store.write(batch)
            group.ingest(batch)
        }
        let live = try XCTUnwrap(group.statuses()["Ana"])
        XCTAssertEqual(live.heartRate.maximum, 130, "the guest strap from 31 s, never Ben's 170")
        XCTAssertEqual(live.heartRate.minimum, 100)

        let ended = try await group.handle(.end, for: .participant("Ana"))
        XCTAssertEqual(ended.workouts.first?.heartRate.maximum, 130, "read back from the store by attribution")
        XCTAssertEqual(ended.workouts.first?.heartRate.minimum, 100)
    }

    /// The gateway's own workout beside a class: started without a device list it collects the
    /// straps nobody wears (the guest's), never a participant's; given a list, what it names.
    func testTheGatewaysOwnWorkoutLeavesTheParticipantsStrapsToThem() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let group = try makeGroup(clock)
        try await group.main.start(activity: .running)
        _ = try await group.handle(.start(activity: .running), for: .participant("Ana"))
        for second in 0...30 {
            s.move(to: Double(second))
            let batch = [
                s.heartRate(120, at: Double(second), device: Self.ana),
                s.heartRate(180, at: Double(second), device: Self.guest),
            ]
            group.main.ingest(batch)
            group.controller(for: "Ana")?.ingest(batch)
        }
        XCTAssertEqual(group.main.status().heartRate.minimum, 180, "only the guest's strap")
        XCTAssertEqual(group.main.status().heartRate.maximum, 180)
        XCTAssertEqual(group.statuses()["Ana"]?.heartRate.maximum, 120)
        let ended = try await group.main.end()
        XCTAssertEqual(ended.heartRate.minimum, 180, "the end's committed records leave Ana's strap too")

        try await group.main.start(activity: .running, devices: ["AA:00:00:00:00:01"])
        s.move(to: 31)
        group.main.ingest([s.heartRate(125, at: 31, device: Self.ana)])
        XCTAssertEqual(group.main.status().heartRate.maximum, 125, "a device list names what it collects, worn or not")
    }

    func testOneParticipantAtATimeAndTheirMistakesAreRefused() async throws {
        let clock = ManualClock()
        let group = try makeGroup(clock)
        let ana = try await group.handle(.start(activity: .cycling), for: .participant("Ana"))
        XCTAssertEqual(ana.workouts.first?.participant, "Ana")
        XCTAssertEqual(group.statuses()["Ben"]?.state, .notStarted)
        do {
            _ = try await group.handle(.start(activity: .cycling), for: .participant("Zoe"))
            XCTFail("an unknown participant is refused")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
        }
        let again = try await group.handle(.start(activity: .cycling), for: .all)
        XCTAssertEqual(again.workouts.map(\.participant), ["Ben"], "Ben starts; Ana's runs already")
        XCTAssertEqual(again.errors.count, 1)
        XCTAssertTrue(again.errors[0].hasPrefix("Ana: "), again.errors[0])
    }

    /// A strap assigned by its address leaves Ben, who listed it by its name: the roster is told
    /// the strap's other identities (as a device heard gives them), so it has one wearer.
    func testAnAssignmentByAnotherIdentityOfTheStrapMovesTheStrap() throws {
        var roster = try ParticipantRoster.decode(Self.configuration, defaultProfile: UserProfile())
        let strap = Device(name: "Ben's strap", localIdentifier: "Wahoo/123", radioIdentifier: "BB:00:00:00:00:02")
        XCTAssertEqual(roster.owner(of: strap)?.name, "Ben")
        try roster.apply(ParticipantAssignment(device: "bb-00-00-00-00-02", participant: "Cleo"), aliases: strap.identities)
        XCTAssertEqual(roster.participant(named: "Ben")?.devices, [])
        XCTAssertEqual(roster.participant(named: "Cleo")?.devices, ["bb-00-00-00-00-02"])
        XCTAssertEqual(roster.owner(of: strap)?.name, "Cleo")
        XCTAssertEqual(roster.participant(named: "Ana")?.devices, ["AA:00:00:00:00:01"], "another strap stays")
    }

    func testAnAssignmentIsCommittedToTheStoreAndSurvivesARestart() async throws {
        let clock = ManualClock()
        let first = try makeGroup(clock)
        try await first.restore()
        clock.advance(by: .seconds(60))
        try await first.assign(device: "AA:00:00:00:00:01", to: "Ben")
        try await first.assign(device: "CC:00:00:00:00:03", to: "Cleo")
        XCTAssertEqual(first.roster.participant(named: "Ana")?.devices, [])
        XCTAssertEqual(first.roster.participant(named: "Ben")?.devices, ["Ben's strap", "AA:00:00:00:00:01"])
        _ = try await first.handle(.start(activity: .rowing), for: .participant("Cleo"))

        // A new gateway on the same store: the configuration alone does not know Cleo.
        let second = try makeGroup(clock)
        try await second.restore()
        XCTAssertEqual(second.roster.participant(named: "Cleo")?.devices, ["CC:00:00:00:00:03"])
        XCTAssertEqual(second.roster.participant(named: "Cleo")?.profile.maximumHeartRate, 190, "the default profile")
        XCTAssertEqual(second.roster.owner(of: Self.ana)?.name, "Ben")
        let cleo = try XCTUnwrap(second.controller(for: "Cleo"))
        try await cleo.restore()
        XCTAssertEqual(cleo.status().state, .running, "Cleo's workout comes back to Cleo")
        XCTAssertEqual(second.main.status().state, .notStarted)
    }

    /// Issue #65: `participant erase` deletes the person's assignments from the store while the
    /// gateway runs, then `participant.reload` makes the running group forget them.
    func testAnErasedPersonsAssignmentsAreForgottenOnReload() async throws {
        let clock = ManualClock()
        let store = try HealthStore(path: path)
        let group = try makeGroup(clock, store: StoredWorkoutJournal(store: store, clock: clock))
        try await group.restore()
        try await group.assign(device: "CC:00:00:00:00:03", to: "Cleo")
        clock.advance(by: .seconds(10))

        _ = try await store.delete(.person("Cleo"))
        XCTAssertEqual(group.roster.owner(of: Self.guest)?.name, "Cleo", "held in memory until reloaded")
        let answer = try await group.controlHandlers()["participant.reload"]?(.object([:]))
        let names = try XCTUnwrap(answer?.decode([ParticipantWorkouts.ParticipantSummary].self)).map(\.name)
        XCTAssertFalse(names.contains("Cleo"), "\(names)")
        XCTAssertNil(group.roster.owner(of: Self.guest))
        XCTAssertEqual(group.roster.owner(of: Self.ana)?.name, "Ana", "the configured roster stays")
    }

    func testTheControlHandlersTakeAParticipantOrAll() async throws {
        let group = try makeGroup(ManualClock(), store: VolatileWorkoutStore())
        let handlers = group.controlHandlers()
        let start = try XCTUnwrap(handlers["workout.start"])
        let one = try await start(.object(["activity": .string("running"), "participant": .string("Ben")]))
        XCTAssertEqual(try one.decode(WorkoutSnapshot.self).participant, "Ben")
        let all = try await start(.object(["activity": .string("running"), "all": .bool(true)]))
        let answer = try all.decode(ParticipantWorkouts.GroupAnswer.self)
        XCTAssertEqual(answer.workouts.map(\.participant), ["Ana"])
        XCTAssertEqual(answer.errors.count, 1)
        do {
            _ = try await start(.object(["activity": .string("running"), "all": .bool(true), "participant": .string("Ben")]))
            XCTFail("both targets at once are refused")
        } catch let error as WorkoutError {
            XCTAssertEqual(error.code, .invalidArgument)
        }
        let assign = try XCTUnwrap(handlers["participant.assign"])
        let list = try await assign(.object(["device": .string("new-strap"), "participant": .string("Dan")]))
        let summaries = try list.decode([ParticipantWorkouts.ParticipantSummary].self)
        XCTAssertEqual(summaries.map(\.name), ["Ana", "Ben", "Dan"])
        XCTAssertEqual(summaries.last?.devices, ["new-strap"])
    }
}
