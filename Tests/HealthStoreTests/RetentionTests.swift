import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// `store.retentionDays`: ``HealthStore/prune(endingBefore:batchSize:keepWorkoutRecords:)`` on a
/// real SQLite file in WAL mode. Old samples, then old quantity series, then old heartbeat series
/// go, each in bounded batches; a series still open, a follower's unsent records, and with
/// `keepWorkoutRecords` what lies in a stored workout's time stay; a workout keeps its
/// statistics and curves whatever goes; other writes run between batches.
final class RetentionTests: StoreTestCase {
    /// The cutoff: one day after ``t0``. "Old" is the first hour of ``t0``'s day, "new" the day after.
    var cutoff: Date { at(86_400) }

    func series(_ ids: SampleIDGenerator, at seconds: Double) throws -> HeartbeatSeriesSample {
        try HeartbeatSeriesSample(
            id: ids.next(), start: at(seconds), end: at(seconds + 2),
            beats: [Heartbeat(timeSinceSeriesStart: 0.8, precededByGap: false), Heartbeat(timeSinceSeriesStart: 1.6, precededByGap: false)],
            device: strap)
    }

    /// What ``writeADay(_:)`` wrote.
    struct Day {
        var oldReadings: [QuantitySample]
        var oldRates: [QuantitySample]
        var recentReadings: [QuantitySample]
        var recentRates: [QuantitySample]
        var oldSeries: HeartbeatSeriesSample
        var looseSeries: HeartbeatSeriesSample
        var recentSeries: HeartbeatSeriesSample
        var workout: Workout
    }

    /// An old morning and a recent one: plain readings and heart rates of the strap (the old
    /// heart rates over 200 s, four quantity series of 61, 61, 61 and 17; the recent ones a
    /// series still open), heartbeat series, and a workout over the first 10 s of the old one.
    func writeADay(_ store: HealthStore) async throws -> Day {
        let ids = makeIDs()
        let oldReadings = try (0..<50).map { try plainReading(ids, 40, at: Double($0)) }
        let oldRates = try (0..<200).map { try heartRate(ids, Double(100 + $0 % 50), at: Double($0)) }
        let recentReadings = try (0..<20).map { try plainReading(ids, 45, at: 90_000 + Double($0)) }
        let recentRates = try (0..<20).map { try heartRate(ids, 130, at: 90_000 + Double($0)) }
        let oldSeries = try series(ids, at: 5)
        let looseSeries = try series(ids, at: 200)
        let recentSeries = try series(ids, at: 90_100)
        let workout = Workout(
            id: ids.next(), activityType: .running, startDate: at(0), endDate: at(10), duration: 10,
            statistics: [QuantityStatistics(type: .heartRate, startDate: at(0), endDate: at(10), sampleCount: 11, average: 105)])
        try await store.write(
            (oldReadings + oldRates).map(HealthRecord.quantity)
                + [.heartbeatSeries(oldSeries), .heartbeatSeries(looseSeries), .workout(workout)])
        // The recent heart rates come 90 000 s after the old ones: the old series closes.
        try await store.write(
            (recentReadings + recentRates).map(HealthRecord.quantity) + [.heartbeatSeries(recentSeries)])
        return Day(
            oldReadings: oldReadings, oldRates: oldRates, recentReadings: recentReadings, recentRates: recentRates,
            oldSeries: oldSeries, looseSeries: looseSeries, recentSeries: recentSeries, workout: workout)
    }

    func testOldSamplesThenSeriesThenHeartbeatSeriesArePrunedInBatchesAndWorkoutsKeepTheirSummaries() async throws {
        let store = try HealthStore(path: path)
        let day = try await writeADay(store)
        XCTAssertEqual(try count("quantity_series"), 5)
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM quantity_series WHERE open = 1"), "1", "the recent one")
        let curves = try await store.workout(id: day.workout.id)?.curves
        XCTAssertEqual(try sqlite3("PRAGMA journal_mode"), "wal")

        let pass = try await store.prune(endingBefore: cutoff, batchSize: 7)
        XCTAssertEqual(pass.samplesPruned, 50, "every old sample: a workout no longer keeps what it collected")
        XCTAssertEqual(pass.quantitySeriesPruned, 4, "the old series, each whole")
        XCTAssertEqual(pass.seriesPruned, 2)
        // Samples 7 a batch (8 batches), series one a batch (7 / 20 rounds up to 1; 4 and the
        // one that ends the type), heartbeat series one a batch (2 and the last look).
        XCTAssertGreaterThanOrEqual(pass.batches, 8 + 4 + 2)
        let plain = try await store.samples(of: Self.plainType)
        XCTAssertEqual(plain, day.recentReadings)
        let rates = try await store.samples(of: .heartRate)
        XCTAssertEqual(rates, try storedQuantities(day.recentRates))
        let beats = try await store.heartbeatSeries()
        XCTAssertEqual(beats, [day.recentSeries])
        XCTAssertEqual(try count("tombstones"), 0, "pruning is not a deletion: no tombstones")

        // The workout stays, with its statistics and its curves; its records are gone.
        let found = try await store.workout(id: day.workout.id)
        XCTAssertEqual(found?.workout, day.workout)
        XCTAssertEqual(found?.samples, [])
        XCTAssertEqual(found?.heartbeatSeries, [])
        XCTAssertEqual(found?.curves, curves)
        // Two points of 5 s: the means of 100 … 104 and of 105 … 109; the reading at 10 s ends at
        // the workout's end, in a third.
        XCTAssertEqual(curves?.first?.points.map(\.value), [102, 107, 110])

        let again = try await store.prune(endingBefore: cutoff, batchSize: 7)
        XCTAssertEqual(again.samplesPruned + again.quantitySeriesPruned + again.seriesPruned, 0, "a second pass finds nothing more")
    }

    func testKeepWorkoutRecordsKeepsWhatLiesInAStoredWorkoutsTime() async throws {
        let store = try HealthStore(path: path)
        let day = try await writeADay(store)
        let pass = try await store.prune(endingBefore: cutoff, batchSize: 7, keepWorkoutRecords: true)
        XCTAssertEqual(pass.samplesPruned, 39, "the 50 old readings but the 11 of the workout's 0 … 10 s")
        XCTAssertEqual(pass.quantitySeriesPruned, 3, "the first series (0 … 60 s) reaches into the workout")
        XCTAssertEqual(pass.seriesPruned, 1, "the loose series; the one at 5 s lies in the workout")
        let plain = try await store.samples(of: Self.plainType)
        XCTAssertEqual(plain, Array(day.oldReadings[0...10]) + day.recentReadings)
        let rates = try await store.samples(of: .heartRate)
        XCTAssertEqual(rates, try storedQuantities(Array(day.oldRates[0...60])) + storedQuantities(day.recentRates))
        let found = try await store.workout(id: day.workout.id)
        XCTAssertEqual(found?.samples, try storedQuantities(Array(day.oldRates[0...60])).filter { $0.endDate <= at(10) })
        XCTAssertEqual(found?.heartbeatSeries, [day.oldSeries])
    }

    func testAnOpenSeriesIsKeptWhateverItsAgeUntilItCloses() async throws {
        let ids = makeIDs()
        let store = try HealthStore(path: path)
        let rates = try (0..<30).map { try heartRate(ids, 90, at: Double($0)) }
        try await store.write(rates.map(HealthRecord.quantity))
        let open = try await store.prune(endingBefore: cutoff, batchSize: 7)
        XCTAssertEqual(open.quantitySeriesPruned, 0, "the writer still adds to it")
        let kept = try await store.samples(of: .heartRate)
        XCTAssertEqual(kept, try storedQuantities(rates))

        await store.close()
        let reopened = try HealthStore(path: path)
        let closed = try await reopened.prune(endingBefore: cutoff, batchSize: 7)
        XCTAssertEqual(closed.quantitySeriesPruned, 1, "closed with the store, it is old")
        let none = try await reopened.samples(of: .heartRate)
        XCTAssertEqual(none, [])
    }

    func testAFollowerBehindKeepsWhatItHasNotAcknowledged() async throws {
        let ids = makeIDs()
        let store = try HealthStore(path: path)
        _ = try await store.registerFollower("broker", startingAt: .beginning)
        let first = try (0..<10).map { try plainReading(ids, 100, at: Double($0)) }
        try await store.write(first.map(HealthRecord.quantity))
        let acknowledged = try await store.latestAnchor()
        let second = try (10..<25).map { try plainReading(ids, 100, at: Double($0)) }
        try await store.write(second.map(HealthRecord.quantity))

        let before = try await store.prune(endingBefore: cutoff, batchSize: 4)
        XCTAssertEqual(before.samplesPruned, 0, "the follower has sent nothing yet")

        try await store.acknowledge(follower: "broker", through: acknowledged)
        let after = try await store.prune(endingBefore: cutoff, batchSize: 4)
        XCTAssertEqual(after.samplesPruned, 10, "only what the follower acknowledged")
        let remaining = try await store.samples(of: Self.plainType)
        XCTAssertEqual(remaining.map(\.id), second.map(\.id))
    }

    func testAWriteRunsBetweenTwoBatchesAndAReaderSeesEachBatchWhole() async throws {
        let ids = makeIDs()
        let old = try (0..<30).map { try plainReading(ids, 110, at: Double($0)) }
        let store = try HealthStore(path: path)
        try await store.write(old.map(HealthRecord.quantity))

        var progress = try await store.pruneBatch(endingBefore: cutoff, after: .start, batchSize: 10)
        XCTAssertEqual(progress.samplesPruned, 10)
        XCTAssertFalse(progress.isFinished)
        // The writer is free between batches: a write commits while the pass is half done.
        let arriving = try plainReading(ids, 140, at: 90_000)
        let summary = try await store.write([.quantity(arriving)])
        XCTAssertEqual(summary.inserted, 1)
        let reader = try HealthStore(path: path, access: .readOnly)
        let halfway = try await reader.samples(of: Self.plainType)
        XCTAssertEqual(halfway.count, 21, "20 old samples still there, and the one just written")

        while !progress.isFinished {
            progress = try await store.pruneBatch(endingBefore: cutoff, after: progress, batchSize: 10)
        }
        XCTAssertEqual(progress.samplesPruned, 30)
        let remaining = try await reader.samples(of: Self.plainType)
        XCTAssertEqual(remaining.map(\.id), [arriving.id])
    }

    func testWritesDuringAPassAllCommitAndTheNewSamplesStay() async throws {
        let ids = makeIDs()
        let old = try (0..<2_000).map { try plainReading(ids, 110, at: Double($0)) }
        let store = try HealthStore(path: path)
        try await store.write(old.map(HealthRecord.quantity))
        let arriving = try (0..<20).map { try plainReading(ids, 140, at: 90_000 + Double($0)) }

        let cutoff = self.cutoff
        async let pass = store.prune(endingBefore: cutoff, batchSize: 20)
        for sample in arriving { try await store.write([.quantity(sample)]) }
        let result = try await pass

        XCTAssertEqual(result.samplesPruned, 2_000)
        XCTAssertGreaterThanOrEqual(result.batches, 2_000 / 20, "at most 20 candidates a batch")
        let remaining = try await store.samples(of: Self.plainType)
        XCTAssertEqual(remaining.map(\.id), arriving.map(\.id))
    }
}
