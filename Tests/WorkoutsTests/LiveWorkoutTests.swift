import GatewayRuntime
import Foundation
import GatewayTesting
import HealthModel
import Workouts
import WorkoutRuntime
import WorkoutsTesting
import XCTest

/// The pure live workout (session plus collected samples) without a controller, a store or a
/// clock: commands in, figures out; a replay of its journal gives the same workout.
final class LiveWorkoutTests: XCTestCase {
    let s = Script(clock: ManualClock())
    let definition = WorkoutDefinition(
        id: SampleIDGenerator(seed: 1).next(), activityType: .running, firstActivityID: SampleIDGenerator(seed: 2).next())

    func entry(_ action: WorkoutAction, _ seconds: Double) -> WorkoutJournalEntry {
        WorkoutJournalEntry(action: action, date: s.at(seconds))
    }

    func series(from start: Double, to end: Double, device: Device = Script.strap) throws -> HealthRecord {
        .heartbeatSeries(try HeartbeatSeriesSample(
            id: s.ids.next(), start: s.at(start), end: s.at(end),
            beats: [Heartbeat(timeSinceSeriesStart: 0, precededByGap: false),
                    Heartbeat(timeSinceSeriesStart: end - start, precededByGap: false)],
            device: device))
    }

    func testOnlyAppliedCommandsCountAsJournalEntries() throws {
        var live = LiveWorkout(definition)
        XCTAssertEqual(try live.apply(entry(.prepare, 0)), .moveTo(.prepared))
        XCTAssertEqual(try live.apply(entry(.start, 0)), .moveTo(.running))
        XCTAssertEqual(try live.apply(entry(.resume, 3)), .ignored)
        XCTAssertEqual(try live.apply(entry(.pause, 5)), .moveTo(.paused))
        XCTAssertEqual(try live.apply(entry(.pause, 6)), .ignored)
        XCTAssertEqual(live.journalCount, 3, "ignored commands are not journaled")
        XCTAssertThrowsError(try live.apply(entry(.start, 7))) {
            XCTAssertEqual(($0 as? WorkoutError)?.code, .invalidTransition)
        }
        XCTAssertEqual(live.journalCount, 3, "a refused command changes nothing")
        XCTAssertEqual(live.session.state, .paused)
    }

    func testAPauseDropsWhatWasCollectedAfterItsDate() throws {
        var live = LiveWorkout(definition)
        try live.apply(entry(.prepare, 0))
        try live.apply(entry(.start, 0))
        // A sample stamped after the pause's date, collected before the pause was applied.
        XCTAssertEqual(live.collect([s.heartRate(120, at: 4), s.heartRate(130, at: 6)]), 2)
        try live.apply(entry(.pause, 5))
        XCTAssertEqual(live.builder.samples.map(\.value), [120])
        XCTAssertEqual(live.collect([s.heartRate(140, at: 7)]), 0, "nothing is collected while paused")
    }

    func testHeartbeatSeriesBelongByOverlapNotByEndDate() throws {
        var live = LiveWorkout(definition)
        try live.apply(entry(.prepare, 0))
        try live.apply(entry(.start, 10))
        try live.apply(entry(.pause, 20))
        try live.apply(entry(.resume, 40))
        let beforeStart = try series(from: 0, to: 9)
        let acrossStart = try series(from: 5, to: 15)
        let acrossPause = try series(from: 15, to: 25)
        let inPause = try series(from: 22, to: 38)
        let acrossEnd = try series(from: 45, to: 80)
        let foreign = try series(from: 12, to: 18, device: Script.other)
        var restricted = LiveWorkout(WorkoutDefinition(
            id: definition.id, activityType: .running, firstActivityID: definition.firstActivityID,
            devices: [Script.strap.localIdentifier ?? ""]))
        for action in [(WorkoutAction.prepare, 0.0), (.start, 10)] { try restricted.apply(entry(action.0, action.1)) }
        XCTAssertEqual(restricted.collect([foreign, acrossStart]), 1, "the device filter applies to series")
        live.collect([beforeStart, acrossStart, acrossPause, inPause])
        try live.apply(entry(.end, 50))
        // The series still being recorded at the end arrives later; replayed with it, it belongs.
        XCTAssertEqual(Set(live.builder.heartbeatSeriesIDs), Set([acrossStart.id, acrossPause.id]))
        var journal = JournaledWorkout(definition: definition, entries: [
            entry(.prepare, 0), entry(.start, 10), entry(.pause, 20), entry(.resume, 40), entry(.end, 50),
        ])
        let replayed = try LiveWorkout.replay(journal, records: [beforeStart, acrossStart, acrossPause, inPause, acrossEnd])
        XCTAssertEqual(Set(replayed.builder.heartbeatSeriesIDs), Set([acrossStart.id, acrossPause.id, acrossEnd.id]))
        journal.entries.removeLast()
        XCTAssertFalse(journal.hasEnded)
    }

    func testAReplayOfTheJournalGivesTheLiveWorkout() throws {
        var live = LiveWorkout(definition)
        var journal = JournaledWorkout(definition: definition, entries: [])
        var committed: [HealthRecord] = []
        func command(_ entry: WorkoutJournalEntry) throws {
            if try live.apply(entry) != .ignored { journal.entries.append(entry) }
        }
        func stream(_ records: [HealthRecord]) {
            live.collect(records)
            committed += records
        }
        try command(entry(.prepare, 0))
        try command(entry(.start, 0))
        stream([s.heartRate(130, at: 0), s.steps(10, from: 0, to: 5), s.heartRate(150, at: 5)])
        try command(entry(.lap, 8))
        try command(entry(.pause, 12))
        stream([s.heartRate(190, at: 15)])
        try command(entry(.pause, 16))
        try command(WorkoutJournalEntry(
            action: .beginActivity, date: s.at(18), newActivity: .init(id: s.ids.next(), type: .walking)))
        try command(entry(.resume, 20))
        stream([s.heartRate(140, at: 22), s.steps(20, from: 22, to: 30), s.energy(3, from: 20, to: 30)])
        try command(entry(.end, 30))
        let original = live.workout(profile: scriptedProfile)

        // The store's samples in any order, plus one of another type the workout does not take.
        let other = HealthRecord.quantity(try QuantitySample(
            id: s.ids.next(), type: .heartRateVariabilitySDNN, quantity: Quantity(40, .millisecond),
            start: s.at(10), end: s.at(10)))
        let replayed = try LiveWorkout.replay(journal, records: committed.reversed() + [other])
        var restored = replayed.workout(profile: scriptedProfile)
        XCTAssertEqual(restored.metadata["healthgate.restoredAfterRestart"], .bool(true))
        restored.metadata["healthgate.restoredAfterRestart"] = nil
        XCTAssertEqual(restored, original)
        XCTAssertEqual(original.events.map(\.type), [.lap, .pause, .resume])
        XCTAssertEqual(original.activities.map(\.activityType), [.running, .walking])
    }

    func testControlRequestsRoundTripThroughTheirWireForm() throws {
        let requests: [WorkoutControlRequest] = [
            .start(activity: .running, devices: ["AA:BB:CC:DD:EE:FF", "Pod"], types: [.heartRate, .stepCount]),
            .start(activity: .cycling), .pause, .resume, .lap, .marker(note: "gel"), .marker(),
            .activity(.transition), .end, .status,
        ]
        XCTAssertEqual(Set(requests.map(\.command)), Set(WorkoutControlRequest.commands))
        for request in requests {
            XCTAssertEqual(try WorkoutControlRequest(command: request.command, arguments: request.arguments), request)
            let json = try JSONEncoder().encode(request)
            XCTAssertEqual(try JSONDecoder().decode(WorkoutControlRequest.self, from: json), request)
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            XCTAssertEqual(object["command"] as? String, request.command, "the control socket's request object")
        }
        // A comma-separated devices string, as older clients send it.
        XCTAssertEqual(
            try WorkoutControlRequest(command: "workout.start", arguments: .object([
                "activity": .string("running"), "devices": .string("a,b"),
            ])),
            .start(activity: .running, devices: ["a", "b"]))
        XCTAssertThrowsError(try WorkoutControlRequest(command: "workout.fly", arguments: nil)) {
            XCTAssertEqual(($0 as? WorkoutError)?.code, .invalidArgument)
        }
        XCTAssertThrowsError(try WorkoutControlRequest(command: "workout.start", arguments: .object(["types": .array([.string("nope")]), "activity": .string("running")]))) {
            XCTAssertTrue(($0 as? WorkoutError)?.message.contains("nope") ?? false)
        }
    }
}
