import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import Workouts
import WorkoutRuntime
import XCTest

/// The workout in progress in the store (schema version 4): its journal, the committed samples
/// it is rebuilt from, its removal with the stored workout, and heartbeat series linked to
/// stored workouts by overlap.
final class WorkoutStateStoreTests: StoreTestCase {
    let ids = StoreTestCase.makeIDs()
    var definition: WorkoutDefinition {
        WorkoutDefinition(
            id: SampleID(high: 0x0190_0000_0000_7000, low: 0x8000_0000_0000_0001), activityType: .running,
            firstActivityID: SampleID(high: 0x0190_0000_0000_7000, low: 0x8000_0000_0000_0002),
            devices: ["AA:BB:CC:DD:EE:FF"], types: [.heartRate, .stepCount])
    }

    func series(from start: Double, to end: Double, device: Device = strap) throws -> HeartbeatSeriesSample {
        try HeartbeatSeriesSample(
            id: ids.next(), start: at(start), end: at(end),
            beats: [Heartbeat(timeSinceSeriesStart: 0, precededByGap: false),
                    Heartbeat(timeSinceSeriesStart: end - start, precededByGap: false)],
            device: device)
    }

    /// The definition's run over [0, 100] s, with an empty heart-rate statistic.
    func runningWorkout(duration: Double, events: [WorkoutEvent] = [], metadata: Metadata) -> Workout {
        let statistics = QuantityStatistics(type: .heartRate, startDate: at(0), endDate: at(100), sampleCount: 0)
        return Workout(
            id: definition.id, activityType: .running, startDate: at(0), endDate: at(100), duration: duration,
            events: events, activities: [], statistics: [statistics], metadata: metadata)
    }

    func testEntriesAreCommittedInOrderAndReadBackExactly() async throws {
        let store = StoredWorkoutJournal(store: try HealthStore(path: path), clock: ManualClock())
        var marker = Metadata()
        marker["healthgate.note"] = .string("gel")
        let entries = [
            WorkoutJournalEntry(action: .prepare, date: at(0)),
            WorkoutJournalEntry(action: .start, date: at(0)),
            WorkoutJournalEntry(action: .marker, date: at(12.5), metadata: marker),
            WorkoutJournalEntry(action: .segment, date: at(30), segmentStart: at(20)),
            WorkoutJournalEntry(action: .beginActivity, date: at(40), newActivity: .init(id: ids.next(), type: .cycling)),
        ]
        try store.append(Array(entries[0..<2]), from: 0, of: definition)
        for (index, entry) in entries.enumerated().dropFirst(2) { try store.append([entry], from: index, of: definition) }
        // Read by another store, as after a restart.
        let journaled = try StoredWorkoutJournal(store: try HealthStore(path: path), clock: ManualClock()).journaledWorkouts()
        XCTAssertEqual(journaled, [JournaledWorkout(definition: definition, entries: entries)])
        XCTAssertEqual(try count("live_workout_events"), 5)
        XCTAssertEqual(try sqlite3("PRAGMA integrity_check"), "ok")

        // Entries that do not follow the journal are refused and none is written.
        let laps = [WorkoutJournalEntry(action: .lap, date: at(50)), WorkoutJournalEntry(action: .lap, date: at(51))]
        for index in [2, 7] {
            XCTAssertThrowsError(try store.append(laps, from: index, of: definition)) {
                XCTAssertEqual(($0 as? WorkoutError)?.code, .persistence)
            }
        }
        XCTAssertEqual(try count("live_workout_events"), 5)
    }

    func testCommittedRecordsAreTheSamplesEndingFromTheStartOfTheAskedTypes() async throws {
        let writer = try HealthStore(path: path)
        // A step sample that began before the workout and ends in it (found through its span),
        // one that ended before, heart rate in and before the window, and series either side.
        let across = try steps(ids, 30, from: -40, to: 5)
        let before = try steps(ids, 10, from: -20, to: -1)
        let inside = try heartRate(ids, 120, at: 3)
        let earlier = try heartRate(ids, 110, at: -3)
        let oldSeries = try series(from: -60, to: -1)
        let liveSeries = try series(from: -30, to: 30)
        try await writer.write([across, before, inside, earlier].map(HealthRecord.quantity)
            + [oldSeries, liveSeries].map(HealthRecord.heartbeatSeries))
        let store = StoredWorkoutJournal(store: try HealthStore(path: path), clock: ManualClock())
        let all = try store.committedRecords(of: [.heartRate, .stepCount], endingFrom: at(0), devices: nil, excluding: [])
        // The heart rate inside starts a quantity series; the one at -3 s, written after it, is
        // late: a sample of its own.
        let insideStored = try storedQuantities([inside])[0]
        XCTAssertEqual(Set(all.map(\.id)), [across.id, insideStored.id, liveSeries.id])
        XCTAssertEqual(all.first { $0.id == insideStored.id }, .quantity(insideStored))
        let stepsOnly = try store.committedRecords(of: [.stepCount], endingFrom: at(0), devices: nil, excluding: [])
        XCTAssertEqual(stepsOnly.map(\.id), [across.id], "no heart rate asked: no series either")
    }

    func testTheTransactionThatStoresTheWorkoutRemovesItFromTheWorkoutsInProgress() async throws {
        let store = StoredWorkoutJournal(store: try HealthStore(path: path), clock: ManualClock())
        try store.append(
            [WorkoutJournalEntry(action: .prepare, date: at(0)), WorkoutJournalEntry(action: .start, date: at(0))],
            from: 0, of: definition)
        try store.append([WorkoutJournalEntry(action: .end, date: at(60))], from: 2, of: definition)
        XCTAssertEqual(try store.journaledWorkouts().first?.hasEnded, true)
        let workout = Workout(
            id: definition.id, activityType: .running, startDate: at(0), endDate: at(60), duration: 60,
            events: [], activities: [], statistics: [], metadata: Metadata())
        let writer = try HealthStore(path: path)
        try await writer.write([.workout(workout)])
        XCTAssertEqual(try store.journaledWorkouts(), [])
        XCTAssertEqual(try count("live_workouts"), 0)
        XCTAssertEqual(try count("live_workout_events"), 0)
        // A second copy (published again after a crash) is ignored and leaves nothing behind.
        try store.append([WorkoutJournalEntry(action: .prepare, date: at(0))], from: 0, of: definition)
        let summary = try await writer.write([.workout(workout)])
        XCTAssertEqual(summary.ignored, 1)
        XCTAssertEqual(try count("live_workouts"), 0)
    }

    func testHeartbeatSeriesAreLinkedByOverlapWhicheverIsCommittedSecond() async throws {
        let writer = try HealthStore(path: path)
        // Running [0, 40] and [60, 100]; heart rate from the strap only.
        var metadata = Metadata()
        metadata[.workoutDevices] = .string("AA:BB:CC:DD:EE:FF")
        let workout = runningWorkout(
            duration: 80,
            events: [WorkoutEvent(type: .pause, startDate: at(40)), WorkoutEvent(type: .resume, startDate: at(60))],
            metadata: metadata)
        let earlier = try series(from: 30, to: 50)  // committed before the workout, across the pause
        let paused = try series(from: 45, to: 55)  // wholly in the pause
        let other = try series(from: 10, to: 20, device: Device(name: "Other", localIdentifier: "11:22:33:44:55:66"))
        try await writer.write([earlier, paused, other].map(HealthRecord.heartbeatSeries))
        try await writer.write([.workout(workout)])
        let later = try series(from: 90, to: 150)  // the series being recorded at the end
        let after = try series(from: 101, to: 160)
        try await writer.write([later, after].map(HealthRecord.heartbeatSeries))

        let found = try await HealthStore(path: path, access: .readOnly).workout(id: definition.id)
        let stored = try XCTUnwrap(found)
        XCTAssertEqual(Set(stored.heartbeatSeries.map(\.id)), [earlier.id, later.id])
        XCTAssertEqual(try sqlite3("PRAGMA integrity_check"), "ok")
    }

    /// A workout without a device list (the gateway's own beside a class) links the series of
    /// every device but those it left to the participants, whichever is committed second.
    func testAWorkoutWithoutADeviceListLeavesTheSeriesOfTheDevicesItExcluded() async throws {
        let writer = try HealthStore(path: path)
        var metadata = Metadata()
        metadata[.excludedDevices] = .string("ant:120:863436,Quinn's strap")
        let workout = runningWorkout(duration: 100, metadata: metadata)
        let own = try series(from: 10, to: 20)
        let worn = try series(from: 10, to: 20, device: Device(name: "ANT+ strap", localIdentifier: "ant:120:863436"))
        try await writer.write([own, worn].map(HealthRecord.heartbeatSeries))
        try await writer.write([.workout(workout)])
        let ownLater = try series(from: 90, to: 150)
        let wornLater = try series(from: 90, to: 150, device: Device(name: "Quinn's strap", localIdentifier: "11:22:33:44:55:66"))
        try await writer.write([ownLater, wornLater].map(HealthRecord.heartbeatSeries))

        let found = try await HealthStore(path: path, access: .readOnly).workout(id: definition.id)
        let stored = try XCTUnwrap(found)
        XCTAssertEqual(Set(stored.heartbeatSeries.map(\.id)), [own.id, ownLater.id])
    }
}
