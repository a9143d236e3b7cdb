import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// ``HealthStore/correctClock(onto:)``: every kind of record taken on an earlier base of this
/// boot's clock moves by the step in one transaction, as a new version at a new anchor; records
/// of another boot, of the current base or dated by a device's clock stay.
final class ClockCorrectionTests: StoreTestCase {
    let boot = "7f0c1b6e-5d2a-4c1e-9b7a-1d2e3f405162"
    var before: ClockBase { ClockBase(bootID: boot, wallMinusBootMilliseconds: 1_000) }
    /// The clock stepped forward by a day (and 0.25 s).
    var after: ClockBase { ClockBase(bootID: boot, wallMinusBootMilliseconds: 1_000 + 86_400_250) }
    let cuff = Device(name: "BP7000", localIdentifier: "00:5F:BF:12:34:56")

    func metadata(_ base: ClockBase?, deviceClock: Bool = false) -> Metadata {
        var metadata: Metadata = [.sourceName: .string("test")]
        metadata.clockBase = base
        if deviceClock { metadata[.deviceClock] = .bool(true) }
        return metadata
    }

    func heartRate(_ ids: SampleIDGenerator, at offset: Double, _ metadata: Metadata) throws -> QuantitySample {
        try QuantitySample(
            id: ids.next(), type: .heartRate, quantity: Quantity(60 + offset, .countPerMinute), start: at(offset),
            end: at(offset), device: strap, metadata: metadata)
    }

    func testEveryKindOfRecordOnAnEarlierBaseMovesByTheStepAsANewVersion() async throws {
        let ids = makeIDs()
        // Heart rates are folded into quantity series (one each here: their metadata differ).
        let moving = try heartRate(ids, at: 0, metadata(before))
        let movingPlain = try plainReading(ids, 42, at: 0, metadata: metadata(before))
        let current = try heartRate(ids, at: 1, metadata(after))
        let otherBoot = try heartRate(ids, at: 2, metadata(ClockBase(bootID: "another", wallMinusBootMilliseconds: 5)))
        let device = try heartRate(ids, at: 3, metadata(nil, deviceClock: true))
        let series = try HeartbeatSeriesSample(
            id: ids.next(), start: at(10), end: at(12),
            beats: [Heartbeat(timeSinceSeriesStart: 0.8, precededByGap: false), Heartbeat(timeSinceSeriesStart: 1.6, precededByGap: true)],
            device: strap, metadata: metadata(before))
        func member(_ type: QuantityType, _ value: Double) throws -> QuantitySample {
            try QuantitySample(
                id: ids.next(), type: type, quantity: Quantity(value, .millimeterOfMercury), start: at(20), end: at(20),
                device: cuff, metadata: metadata(before))
        }
        let pressure = try CorrelationSample.bloodPressure(
            id: ids.next(), systolic: try member(.bloodPressureSystolic, 121), diastolic: try member(.bloodPressureDiastolic, 79),
            device: cuff, metadata: metadata(before))
        let workout = Workout(
            id: ids.next(), activityType: .running, startDate: at(0), endDate: at(30), duration: 25,
            events: [WorkoutEvent(type: .pause, startDate: at(5)), WorkoutEvent(type: .resume, startDate: at(10))],
            activities: [WorkoutActivity(id: ids.next(), activityType: .running, startDate: at(0), endDate: at(30))],
            metadata: metadata(before))
        let store = try HealthStore(path: path)
        try await store.write([
            .quantity(moving), .quantity(movingPlain), .quantity(current), .quantity(otherBoot), .quantity(device),
            .heartbeatSeries(series), .correlation(pressure), .workout(workout),
        ])
        let anchor = try await store.latestAnchor()

        let correction = try await store.correctClock(onto: after)
        XCTAssertEqual(
            correction.records, 5, "the sample, the quantity series, the heartbeat series, the correlation and the workout")
        let step = 86_400.25
        let moved = { (date: Date) in date.addingTimeInterval(step) }

        // Each heart rate is the quantity of the series its first reading named.
        let rates = try await store.samples(of: .heartRate)
        XCTAssertEqual(
            rates.map { $0.metadata[.series] }, [current, otherBoot, device, moving].map { .string($0.id.uuidString) },
            "by start date")
        let rate = try XCTUnwrap(rates.last)
        XCTAssertEqual(rate.startDate, moved(moving.startDate))
        XCTAssertEqual(rate.quantity, moving.quantity)
        XCTAssertEqual(rate.device, strap)
        XCTAssertEqual(rate.metadata.clockBase, after)
        XCTAssertEqual(rate.metadata[.clockCorrected], .double(step))
        XCTAssertEqual(rate.metadata[.sourceName], .string("test"), "the rest of the metadata stays")
        XCTAssertEqual(rates[0...2].map(\.startDate), [current, otherBoot, device].map(\.startDate))
        XCTAssertEqual(rates[0...2].map(\.quantity), [current, otherBoot, device].map(\.quantity))
        let plain = try await store.samples(of: Self.plainType)
        XCTAssertEqual(plain.map(\.id), [movingPlain.id])
        XCTAssertEqual(plain.first?.startDate, moved(movingPlain.startDate))
        XCTAssertEqual(plain.first?.metadata.clockBase, after)
        XCTAssertEqual(plain.first?.metadata[.clockCorrected], .double(step))

        let allSeries = try await store.heartbeatSeries()
        let storedSeries = try XCTUnwrap(allSeries.first)
        XCTAssertEqual(storedSeries.startDate, moved(series.startDate))
        XCTAssertEqual(storedSeries.endDate, moved(series.endDate))
        XCTAssertEqual(storedSeries.beats, series.beats, "beats are relative to the start")

        let pressures = try await store.correlations(of: .bloodPressure)
        let storedPressure = try XCTUnwrap(pressures.first)
        XCTAssertEqual(storedPressure.startDate, moved(pressure.startDate))
        XCTAssertEqual(Set(storedPressure.objects.map(\.startDate)), [moved(at(20))])
        XCTAssertEqual(storedPressure.objects.map { $0.metadata[.clockCorrected] }, [.double(step), .double(step)])
        let systolic = try await store.samples(of: .bloodPressureSystolic)
        XCTAssertEqual(systolic.count, 1, "members moved, not copied")

        let found = try await store.workout(id: workout.id)
        let storedWorkout = try XCTUnwrap(found).workout
        XCTAssertEqual(storedWorkout.startDate, moved(workout.startDate))
        XCTAssertEqual(storedWorkout.endDate, moved(workout.endDate))
        XCTAssertEqual(storedWorkout.duration, 25)
        XCTAssertEqual(storedWorkout.events.map(\.startDate), workout.events.map { moved($0.startDate) })
        XCTAssertEqual(storedWorkout.activities.map(\.startDate), [moved(at(0))])

        // Followers see each moved record once more at a new anchor, as the same uuid; nothing
        // deleted. The quantity series moves as its next version (it was provisional, it is
        // stored closed), so a receiver keeping the highest version keeps the moved one.
        let changes = try await store.changes(since: anchor, includingCorrelationMembers: false)
        XCTAssertEqual(Set(changes.added.map(\.id)), [moving.id, movingPlain.id, series.id, pressure.id, workout.id])
        XCTAssertTrue(changes.deleted.isEmpty)
        let movedSeries = changes.added.compactMap { record -> QuantitySeriesSample? in
            if case .quantitySeries(let series) = record { series } else { nil }
        }
        XCTAssertEqual(movedSeries.map(\.metadata.syncVersion), [2])
        XCTAssertEqual(movedSeries.map(\.metadata.syncIdentifier), ["quantity-series:\(moving.id.uuidString)"])
        XCTAssertEqual(movedSeries.map(\.isProvisional), [false])
        XCTAssertEqual(movedSeries.first?.quantities.map(\.startDate), [moved(moving.startDate)])

        // Once moved, nothing moves again.
        let again = try await store.correctClock(onto: after)
        XCTAssertTrue(again.isEmpty)
        // A second step adds up.
        var later = after
        later.wallMinusBootMilliseconds -= 3_600_000
        try await store.correctClock(onto: later)
        let all = try await store.samples(of: .heartRate)
        let twice = try XCTUnwrap(all.first { $0.metadata[.series] == .string(moving.id.uuidString) })
        XCTAssertEqual(twice.startDate, moved(moving.startDate).addingTimeInterval(-3600))
        XCTAssertEqual(twice.metadata[.clockCorrected], .double(step - 3600))
        let plainTwice = try await store.samples(of: Self.plainType)
        XCTAssertEqual(plainTwice.map(\.startDate), [moved(movingPlain.startDate).addingTimeInterval(-3600)])
    }

    /// The change log's commit and tombstone dates written on the base before a step move with
    /// it: a follower's backlog keeps its true age (a step forward of years would otherwise make
    /// it older than any retention, and skipped), tombstones their true purge date. Dates of
    /// another time (before this boot on the old base) stay.
    /// A reading dated on the earlier base but written after the correction (it waited in the
    /// sink's batch window while the correction ran: the lab's clock-unsynchronized scenario
    /// once stored one a day back) is moved onto the new base as it is written.
    func testARecordOnTheEarlierBaseWrittenAfterTheCorrectionIsMovedToo() async throws {
        let ids = makeIDs()
        let store = try HealthStore(path: path)
        try await store.write([.quantity(try plainReading(ids, 40, at: 0, metadata: metadata(before)))])
        _ = try await store.correctClock(onto: after)
        let late = try plainReading(ids, 41, at: 1, metadata: metadata(before))
        let other = try plainReading(ids, 42, at: 2, metadata: metadata(ClockBase(bootID: "another", wallMinusBootMilliseconds: 5)))
        try await store.write([.quantity(late), .quantity(other)])
        let stored = try await store.samples(of: Self.plainType)
        XCTAssertEqual(stored.map(\.quantity.value), [42, 40, 41], "another boot's stays; both of this boot's moved")
        let moved = try XCTUnwrap(stored.first { $0.quantity.value == 41 })
        XCTAssertEqual(moved.startDate.timeIntervalSince(late.startDate), 86_400.25, accuracy: 0.001)
        XCTAssertEqual(moved.metadata.clockBase, after)
        XCTAssertEqual(moved.metadata[.clockCorrected], .double(86_400.25))
        await store.close()
    }

    func testTheLogsDatesWrittenBeforeAStepMoveWithIt() async throws {
        let store = try HealthStore(path: path)
        _ = try await store.registerFollower("broker", startingAt: .beginning)
        let ids = makeIDs()
        let sample = try heartRate(ids, at: 0, metadata(nil))
        try await store.write([.quantity(sample)])
        let deleted = try await store.delete(.ids([sample.id]))
        XCTAssertEqual(deleted.map(\.id), [sample.id])
        // The store dates with the real clock: say it booted 100 s ago on the base before the
        // step, and the step is 30 days back.
        let now = Date()
        let previous = ClockBase(bootID: boot, wallMinusBootMilliseconds: Int64((now.timeIntervalSince1970 - 100) * 1000))
        var stepped = previous
        stepped.wallMinusBootMilliseconds -= 30 * 86_400_000
        let before = try await store.backlog(after: 0)
        let written = try XCTUnwrap(before.oldest)
        XCTAssertEqual(written.timeIntervalSince(now), 0, accuracy: 5)

        let correction = try await store.correctClock(onto: stepped, from: previous, now: now.addingTimeInterval(-30 * 86_400))
        XCTAssertEqual(correction.logEntries, 3, "two commits (the write, the deletion) and the tombstone")
        let after = try await store.backlog(after: 0)
        XCTAssertEqual(try XCTUnwrap(after.oldest).timeIntervalSince(written), -30 * 86_400, accuracy: 0.001)
        let purged = try await store.purgeTombstones(deletedBefore: now.addingTimeInterval(-29 * 86_400))
        XCTAssertEqual(purged, 0, "a tombstone the follower has not acknowledged stays, whatever its date")
        try await store.acknowledge(follower: "broker", through: try await store.latestAnchor())
        let due = try await store.purgeTombstones(deletedBefore: now.addingTimeInterval(-29 * 86_400))
        XCTAssertEqual(due, 1, "moved 30 days back, the tombstone is older than 29 days")

        // Without the base before the step nothing of the log moves (the start of a gateway).
        let none = try await store.correctClock(onto: previous, now: now)
        XCTAssertEqual(none.logEntries, 0)
    }

    func testJournalEntriesOfAWorkoutInProgressMoveInPlaceAndKeepTheirBaseOutOfTheirMetadata() async throws {
        let store = try HealthStore(path: path)
        let ids = makeIDs()
        let definition = WorkoutDefinition(
            id: ids.next(), activityType: .running, firstActivityID: ids.next(), devices: nil, types: [.heartRate], participant: nil)
        try store.appendToWorkoutJournal([
            WorkoutJournalEntry(action: .prepare, date: at(0), clockBase: before),
            WorkoutJournalEntry(action: .start, date: at(0), clockBase: before),
            WorkoutJournalEntry(action: .marker, date: at(5), metadata: ["note": .string("km 1")], clockBase: before),
            WorkoutJournalEntry(action: .segment, date: at(8), segmentStart: at(6), clockBase: after),
        ], from: 0, of: definition)
        let correction = try await store.correctClock(onto: after)
        XCTAssertEqual(correction.journalEntries, 3)
        let entries = try XCTUnwrap(try store.workoutJournal().first).entries
        XCTAssertEqual(entries.map(\.date), [at(0), at(0), at(5)].map { $0.addingTimeInterval(86_400.25) } + [at(8)])
        XCTAssertEqual(entries[3].segmentStart, at(6), "taken on the base now: stays")
        XCTAssertEqual(entries.map(\.clockBase), [after, after, after, after])
        XCTAssertEqual(entries[2].metadata, ["note": .string("km 1")], "the base is not the event's metadata")
    }
}
