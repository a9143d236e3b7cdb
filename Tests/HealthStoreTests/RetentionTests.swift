import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// `store.retentionDays`: ``HealthStore/prune(endingBefore:batchSize:)`` on a real SQLite file
/// in WAL mode. Old raw samples and heartbeat series go, in batches; what a workout references,
/// the workout and its statistics stay; a follower's unsent records stay; other writes run
/// between batches.
final class RetentionTests: StoreTestCase {
    /// The cutoff: one day after ``t0``. "Old" is the first hour of ``t0``'s day, "new" the day after.
    var cutoff: Date { at(86_400) }

    func series(_ ids: SampleIDGenerator, at seconds: Double) throws -> HeartbeatSeriesSample {
        try HeartbeatSeriesSample(
            id: ids.next(), start: at(seconds), end: at(seconds + 2),
            beats: [Heartbeat(timeSinceSeriesStart: 0.8, precededByGap: false), Heartbeat(timeSinceSeriesStart: 1.6, precededByGap: false)],
            device: strap)
    }

    func testOldSamplesAndSeriesArePrunedNewOnesAndWhatAWorkoutReferencesStay() async throws {
        let ids = makeIDs()
        let old = try (0..<50).map { try heartRate(ids, 120, at: Double($0)) }
        let recent = try (0..<20).map { try heartRate(ids, 130, at: 90_000 + Double($0)) }
        let oldSeries = try series(ids, at: 100)
        let recentSeries = try series(ids, at: 90_100)
        // A workout of the old day that collected the first ten samples and the first old series.
        let kept = Array(old[0..<10])
        let workout = Workout(
            id: ids.next(), activityType: .running, startDate: at(0), endDate: at(10), duration: 10,
            statistics: [QuantityStatistics(type: .heartRate, startDate: at(0), endDate: at(10), sampleCount: 10, average: 120)])
        let looseSeries = try series(ids, at: 200)
        let store = try HealthStore(path: path)
        try await store.write(
            old.map(HealthRecord.quantity) + recent.map(HealthRecord.quantity)
                + [.heartbeatSeries(oldSeries), .heartbeatSeries(recentSeries), .heartbeatSeries(looseSeries), .workout(workout)])
        XCTAssertEqual(try sqlite3("PRAGMA journal_mode"), "wal")
        let pass = try await store.prune(endingBefore: cutoff, batchSize: 7)

        XCTAssertEqual(pass.samplesPruned, 40, "the 50 old samples but the 10 the workout references")
        XCTAssertEqual(pass.seriesPruned, 1, "the old series the workout does not reference")
        XCTAssertGreaterThan(pass.batches, 50 / 7, "in batches of at most 7 candidates")
        let remaining = try await store.samples(of: .heartRate)
        XCTAssertEqual(Set(remaining.map(\.id)), Set((kept + recent).map(\.id)))
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM heartbeat_series WHERE end_us < \(Int64(cutoff.timeIntervalSince1970 * 1e6))"), "1")
        XCTAssertEqual(try count("heartbeat_series"), 2)
        XCTAssertEqual(try count("heartbeats"), 4, "the pruned series' beats went with it")
        let found = try await store.workout(id: workout.id)
        XCTAssertEqual(found?.workout.statistics.count, 1, "the workout and its statistics stay")
        XCTAssertEqual(found?.samples.map(\.id), kept.map(\.id), "with every sample it references")
        XCTAssertEqual(found?.heartbeatSeries.map(\.id), [oldSeries.id])
        XCTAssertEqual(try count("tombstones"), 0, "pruning is not a deletion: no tombstones")

        let again = try await store.prune(endingBefore: cutoff, batchSize: 7)
        XCTAssertEqual(again.samplesPruned + again.seriesPruned, 0, "a second pass finds nothing more")
    }

    func testAFollowerBehindKeepsWhatItHasNotAcknowledged() async throws {
        let ids = makeIDs()
        let store = try HealthStore(path: path)
        _ = try await store.registerFollower("broker", startingAt: .beginning)
        let first = try (0..<10).map { try heartRate(ids, 100, at: Double($0)) }
        try await store.write(first.map(HealthRecord.quantity))
        let acknowledged = try await store.latestAnchor()
        let second = try (10..<25).map { try heartRate(ids, 100, at: Double($0)) }
        try await store.write(second.map(HealthRecord.quantity))

        let before = try await store.prune(endingBefore: cutoff, batchSize: 4)
        XCTAssertEqual(before.samplesPruned, 0, "the follower has sent nothing yet")

        try await store.acknowledge(follower: "broker", through: acknowledged)
        let after = try await store.prune(endingBefore: cutoff, batchSize: 4)
        XCTAssertEqual(after.samplesPruned, 10, "only what the follower acknowledged")
        let remaining = try await store.samples(of: .heartRate)
        XCTAssertEqual(remaining.map(\.id), second.map(\.id))
    }

    func testAWriteRunsBetweenTwoBatchesAndAReaderSeesEachBatchWhole() async throws {
        let ids = makeIDs()
        let old = try (0..<30).map { try heartRate(ids, 110, at: Double($0)) }
        let store = try HealthStore(path: path)
        try await store.write(old.map(HealthRecord.quantity))

        var progress = try await store.pruneBatch(endingBefore: cutoff, after: .start, batchSize: 10)
        XCTAssertEqual(progress.samplesPruned, 10)
        XCTAssertFalse(progress.isFinished)
        // The writer is free between batches: a write commits while the pass is half done.
        let arriving = try heartRate(ids, 140, at: 90_000)
        let summary = try await store.write([.quantity(arriving)])
        XCTAssertEqual(summary.inserted, 1)
        let reader = try HealthStore(path: path, access: .readOnly)
        let halfway = try await reader.samples(of: .heartRate)
        XCTAssertEqual(halfway.count, 21, "20 old samples still there, and the one just written")

        while !progress.isFinished {
            progress = try await store.pruneBatch(endingBefore: cutoff, after: progress, batchSize: 10)
        }
        XCTAssertEqual(progress.samplesPruned, 30)
        let remaining = try await reader.samples(of: .heartRate)
        XCTAssertEqual(remaining.map(\.id), [arriving.id])
    }

    func testWritesDuringAPassAllCommitAndTheNewSamplesStay() async throws {
        let ids = makeIDs()
        let old = try (0..<2_000).map { try heartRate(ids, 110, at: Double($0)) }
        let store = try HealthStore(path: path)
        try await store.write(old.map(HealthRecord.quantity))
        let arriving = try (0..<20).map { try heartRate(ids, 140, at: 90_000 + Double($0)) }

        let cutoff = self.cutoff
        async let pass = store.prune(endingBefore: cutoff, batchSize: 20)
        for sample in arriving { try await store.write([.quantity(sample)]) }
        let result = try await pass

        XCTAssertEqual(result.samplesPruned, 2_000)
        XCTAssertGreaterThanOrEqual(result.batches, 2_000 / 20, "at most 20 candidates a batch")
        let remaining = try await store.samples(of: .heartRate)
        XCTAssertEqual(remaining.map(\.id), arriving.map(\.id))
    }
}
