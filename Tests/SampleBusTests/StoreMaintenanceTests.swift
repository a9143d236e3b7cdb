import Foundation
import GatewayRuntime
import GatewayTesting
import HealthModel
import HealthStore
import HealthStoreTesting
import SampleBus
import SQLite
import XCTest

/// ``StoreMaintenance`` on a ``ManualClock`` with real stores: the background migration of a
/// store the previous release wrote (batches, its log, a failed batch retried), a store created
/// at this version migrated quietly, idle quantity series closed every gap, and retention with and
/// without `keepWorkoutSamples`.
final class StoreMaintenanceTests: XCTestCase {
    var directory: URL!
    let logs = RecordingLogSink()
    let clock = ManualClock()

    override func setUp() async throws {
        directory = try TestEnvironment.temporaryDirectory("store-maintenance")
    }

    override func tearDown() async throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    var path: String { directory.appendingPathComponent("samples.sqlite").path }

    func maintenance(
        _ store: HealthStore, retention: Duration? = nil, keepWorkoutSamples: Bool = false
    ) -> StoreMaintenance {
        var maintenance = StoreMaintenance(
            store: store, tombstoneRetention: .seconds(90 * 86_400), sampleRetention: retention, keepWorkoutSamples: keepWorkoutSamples,
            clock: clock, logger: Logger(label: "healthgate", sink: logs, level: .debug))
        // Small batches, so that the migration reports its progress along the way.
        maintenance.migrationSeriesBatch = 2
        maintenance.migrationLinkBatch = 10
        return maintenance
    }

    func messages(containing text: String, level: LogLevel? = nil) -> [String] {
        logs.entries.filter { $0.message.contains(text) && (level == nil || $0.level == level) }.map(\.message)
    }

    func waitForLog(_ text: String) async throws {
        try await waitUntil(timeout: .seconds(30), "a log line with \"\(text)\"") { [logs] in logs.contains(text) }
    }

    func testTheMigrationOfAPreviousStoreRunsInBatchesAndLogsItsStartProgressAndEnd() async throws {
        try PreviousSchemaStore.make(path: path, heartbeatSeries: 40, workoutLinks: 100)
        let store = try await HealthStore.open(path: path, uptime: { [clock] in clock.uptime() })
        let before = try await store.migrationSteps()
        XCTAssertEqual(before.map(\.name), ["heartbeats", "workout_samples"])
        XCTAssertEqual(before.map(\.total), [40, 100])
        XCTAssertTrue(before.allSatisfy { $0.finished == nil })

        let running = Task { [maintenance = maintenance(store)] in try await maintenance.run() }
        defer { running.cancel() }
        try await waitForLog("store migration: finished")
        let steps = try await store.migrationSteps()
        XCTAssertTrue(steps.allSatisfy { $0.finished != nil }, "\(steps)")
        XCTAssertEqual(steps.map(\.handled), [40, 100])

        XCTAssertEqual(
            messages(containing: "store migration: started", level: .info),
            ["store migration: started in the background, ingest goes on; heartbeats 0/40, workout_samples 0/100"])
        // 20 batches of 2 series and one that drops `heartbeats`, 10 of 10 links and one that
        // drops `workout_samples`.
        let end = try XCTUnwrap(messages(containing: "store migration: finished", level: .info).first)
        XCTAssertTrue(end.hasPrefix("store migration: finished in "), end)
        XCTAssertTrue(
            end.hasSuffix(", 32 batches; heartbeats 40/40 (finished), workout_samples 100/100 (finished)"), end)
        // A line at each further tenth (a batch of links is 7 % of the rows, so none is skipped
        // twice), in order, none at 100 % (the end says it).
        let percents = messages(containing: "% done", level: .info).compactMap { line in
            line.split(separator: " ").dropFirst(2).first.flatMap { Int($0) }
        }
        XCTAssertEqual(percents, percents.sorted())
        XCTAssertEqual(Set(percents.map { $0 / 10 }).count, percents.count, "one line per tenth: \(percents)")
        XCTAssertGreaterThanOrEqual(percents.count, 8, "\(percents)")
        XCTAssertTrue(percents.allSatisfy { (10..<100).contains($0) }, "\(percents)")
        XCTAssertTrue(messages(containing: "store migration", level: .error).isEmpty)
    }

    func testAStoreCreatedAtThisVersionFinishesItsStepsQuietly() async throws {
        let store = try await HealthStore.open(path: path, uptime: { [clock] in clock.uptime() })
        let running = Task { [maintenance = maintenance(store)] in try await maintenance.run() }
        defer { running.cancel() }
        // A store made at this version starts with its steps finished: the loop goes straight to
        // its sleeps (the retention's hour and the idle series' gap) and says nothing of them.
        try await clock.waitForSleepers(2)
        let steps = try await store.migrationSteps()
        XCTAssertTrue(steps.allSatisfy { $0.finished != nil && $0.total == 0 }, "\(steps)")
        XCTAssertTrue(messages(containing: "store migration").isEmpty, "\(logs.entries)")
    }

    /// A batch that fails leaves nothing of itself; the loop logs it, waits
    /// ``StoreMaintenance/migrationRetryDelay`` on the gateway's clock and goes on from where the
    /// store stands, without announcing its start again.
    func testAFailedBatchIsLoggedAndRetriedAfterTheDelay() async throws {
        try PreviousSchemaStore.make(path: path, heartbeatSeries: 6, workoutLinks: 20)
        let store = try await HealthStore.open(path: path, uptime: { [clock] in clock.uptime() })
        // Another connection makes every batch fail, as a full disk or an I/O error would.
        let saboteur = try SQLiteConnection(path: path)
        try saboteur.execute(
            "CREATE TRIGGER refuse_migration BEFORE UPDATE ON store_migrations BEGIN SELECT RAISE(ABORT, 'injected failure'); END")

        let running = Task { [maintenance = maintenance(store)] in try await maintenance.run() }
        defer { running.cancel() }
        try await waitForLog("store migration: a batch failed")
        // The migration's retry, the retention's hour and the idle series' gap.
        try await clock.waitForSleepers(3)
        let afterFailure = try await store.migrationSteps()
        XCTAssertEqual(afterFailure.map(\.done), [0, 0], "nothing of the failed batch is kept")
        XCTAssertEqual(messages(containing: "a batch failed", level: .error).count, 1)
        XCTAssertTrue(messages(containing: "a batch failed").first?.contains("injected failure") ?? false, "\(logs.entries)")

        try saboteur.execute("DROP TRIGGER refuse_migration")
        clock.advance(by: StoreMaintenance.migrationRetryDelay)
        try await waitForLog("store migration: finished")
        XCTAssertEqual(messages(containing: "store migration: started").count, 1)
        let finished = try await store.migrationSteps()
        XCTAssertTrue(finished.allSatisfy { $0.finished != nil }, "\(finished)")
    }

    /// The interval is the built-in policies' gap; a series nothing was added to for that long
    /// on the gateway's monotonic clock is closed by the loop, without a write to trigger it.
    func testIdleQuantitySeriesAreClosedWhenTheirGapRunsOut() async throws {
        XCTAssertEqual(StoreMaintenance.idleSeriesInterval, QuantitySeriesPolicy.stream.maximumGap)
        let store = try await HealthStore.open(path: path, uptime: { [clock] in clock.uptime() })
        let ids = SampleIDGenerator(seed: 3)
        let start = clock.now()
        try await store.write(try (0..<3).map { second in
            let date = start.addingTimeInterval(Double(second))
            return .quantity(try QuantitySample(
                id: ids.next(), type: .heartRate, quantity: Quantity(80, .countPerMinute), start: date, end: date,
                device: StoreTestCase.strap))
        })
        let series: @Sendable () async throws -> QuantitySeriesSample? = {
            let added = try await store.changes(since: 0, type: .quantity(.heartRate)).added
            return added.compactMap { record -> QuantitySeriesSample? in
                if case .quantitySeries(let series) = record { return series }
                return nil
            }.last
        }
        let open = try await series()
        XCTAssertEqual(open?.count, 3)
        XCTAssertEqual(open?.isProvisional, true)

        let running = Task { [maintenance = maintenance(store)] in try await maintenance.run() }
        defer { running.cancel() }
        try await clock.waitForSleepers(2)
        clock.advance(by: StoreMaintenance.idleSeriesInterval - .seconds(1))
        try await clock.waitForSleepers(2)
        let stillOpen = try await series()
        XCTAssertEqual(stillOpen?.isProvisional, true, "a second before its gap runs out, the series is open")
        clock.advance(by: .seconds(1))
        try await waitUntil("the idle series closed") { try await series()?.isProvisional == false }
        let closed = try await series()
        XCTAssertEqual(closed?.id, open?.id)
        XCTAssertEqual(closed?.count, 3)
        XCTAssertGreaterThan(closed?.metadata.syncVersion ?? 0, open?.metadata.syncVersion ?? 0)
    }

    /// `retentionDays` prunes a finished workout's series too; `keepWorkoutSamples` spares what
    /// lies in a stored workout's time. The workout itself stays either way.
    func testRetentionPrunesAWorkoutsSeriesUnlessKeepWorkoutSamples() async throws {
        for keep in [false, true] {
            let file = directory.appendingPathComponent("retention-\(keep).sqlite").path
            let store = try await HealthStore.open(path: file, uptime: { [clock] in clock.uptime() })
            let ids = SampleIDGenerator(seed: keep ? 5 : 6)
            let tenDaysAgo = clock.now().addingTimeInterval(-10 * 86_400)
            func series(at start: Date) throws -> QuantitySeriesSample {
                try QuantitySeriesSample(
                    id: ids.next(), type: .heartRate, unit: .countPerMinute,
                    quantities: (0..<30).map { second in
                        SeriesQuantity(
                            value: 100, start: start.addingTimeInterval(Double(second)), end: start.addingTimeInterval(Double(second)))
                    },
                    device: StoreTestCase.strap)
            }
            let inWorkout = try series(at: tenDaysAgo)
            let outside = try series(at: tenDaysAgo.addingTimeInterval(3600))
            let recent = try series(at: clock.now().addingTimeInterval(-86_400))
            let workout = Workout(
                id: ids.next(), activityType: .running, startDate: tenDaysAgo, endDate: tenDaysAgo.addingTimeInterval(60), duration: 60)
            try await store.write([.quantitySeries(inWorkout), .quantitySeries(outside), .quantitySeries(recent), .workout(workout)])

            let running = Task { [maintenance = maintenance(store, retention: .seconds(7 * 86_400), keepWorkoutSamples: keep)] in
                try await maintenance.run()
            }
            try await waitForLog("(store.retentionDays\(keep ? ", store.keepWorkoutSamples" : ""))")
            running.cancel()
            let left = Set(try await store.samples(of: .heartRate).compactMap { sample -> String? in
                if case .string(let series) = sample.metadata[.series] { return series }
                return nil
            })
            XCTAssertEqual(left, Set((keep ? [inWorkout, recent] : [recent]).map(\.id.uuidString)), "keepWorkoutSamples: \(keep)")
            let workouts = try await store.workouts()
            XCTAssertEqual(workouts.map(\.id), [workout.id])
            let line = try XCTUnwrap(messages(containing: "pruned").last)
            XCTAssertTrue(line.contains("pruned 0 samples, \(keep ? 1 : 2) quantity series and 0 heartbeat series"), line)
        }
    }
}
