import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import HealthStoreTesting
import XCTest

/// The upgrade from the previous release as a gym meets it, on a class-hour the previous schema
/// stored (``PreviousSchemaStore/make(path:_:)``: 30 straps, an hour of heart rates a second as
/// plain samples, a 70-beat heartbeat series a minute per strap with its beats in `heartbeats`,
/// 30 hour-long workouts linked to their samples and series in `workout_samples`, two samples
/// deleted, a follower halfway through the log with two batches begun). This version opens it,
/// its background migration is killed halfway (the store dropped without closing) and resumed by
/// the built gateway, whose `http-repository` sink follows the log to a recording repository.
/// Every answer of the store and of `query stats` and `workout show` is the same at the first
/// open (what version 14 held: the maker's rows), halfway and after the end; the integrity check
/// passes, the legacy tables are gone, every anchor is kept, and the follower sends exactly the
/// objects after its cursor (but the batch its receiver had acknowledged), each once.
final class ClassHourUpgradeTests: XCTestCase {
    /// 2027-01-16T07:00:00Z.
    static let start = Date(timeIntervalSince1970: 1_800_082_800)
    static let end = start.addingTimeInterval(3600)

    /// What a user reads: the store's answers, and the executable's for the statistics and a
    /// workout.
    struct Answers: Equatable {
        var samples: [QuantitySample]
        var heartbeatSeries: [HeartbeatSeriesSample]
        var minutes: [StatisticsByDevice]
        var hour: [StatisticsByDevice]
        var workouts: [StoredWorkout?]
        /// `query stats` by minute and by hour, by device, and `workout show` of the first
        /// workout, each as printed (JSON).
        var printed: [String]
    }

    func answers(_ store: HealthStore, _ healthgate: HealthgateExecutable, _ database: String, _ made: PreviousSchemaStore.ClassContents)
        async throws -> Answers
    {
        let samples = try await store.samples(of: .heartRate, from: Self.start, to: Self.end)
        let series = try await store.heartbeatSeries(from: Self.start, to: Self.end)
        let minutes = try await store.statisticsCollectionByDevice(
            of: .heartRate, from: Self.start, to: Self.end, anchor: Self.start, interval: .seconds(60))
        let hour = try await store.statisticsCollectionByDevice(
            of: .heartRate, from: Self.start, to: Self.end, anchor: Self.start, interval: .seconds(3600))
        var workouts: [StoredWorkout?] = []
        for workout in made.workouts { workouts.append(try await store.workout(id: workout.id)) }
        var printed: [String] = []
        let range = ["--since", "2027-01-16T07:00:00Z", "--until", "2027-01-16T08:00:00Z", "--time-zone", "UTC"]
        for interval in ["minute", "hour"] {
            let stats = try await healthgate.run(
                ["query", "stats", "--type", "heartRate", "--interval", interval, "--by-device", "--format", "json", "--db", database] + range)
            XCTAssertEqual(stats.status, 0, stats.standardError)
            printed.append(stats.standardOutput)
        }
        let show = try await healthgate.run(["workout", "show", made.workouts[0].id.uuidString, "--format", "json", "--db", database])
        XCTAssertEqual(show.status, 0, show.standardError)
        printed.append(show.standardOutput)
        return Answers(samples: samples, heartbeatSeries: series, minutes: minutes, hour: hour, workouts: workouts, printed: printed)
    }

    func testAClassHourOfThePreviousSchemaMigratesThroughAKillAndAnswersTheSame() async throws {
        let began = ContinuousClock.now
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("class-hour.sqlite").path
        let made = try PreviousSchemaStore.make(
            path: database, PreviousSchemaStore.Class(straps: 30, seconds: 3600, deletedSamples: [1234, 77_777], begunBatch: 1000, start: Self.start))
        let madeIn = ContinuousClock.now - began
        XCTAssertEqual(made.samples.count, 30 * 3600 - 2)
        XCTAssertEqual(made.heartbeatSeries.count, 30 * 60)
        XCTAssertEqual(made.links, 30 * 3600 + 30 * 60)

        // The first start: the schema is 15, nothing is moved yet, and every answer is what
        // version 14 held.
        var store: HealthStore? = try await HealthStore.open(path: database)
        let steps = try await XCTUnwrap(store).migrationSteps()
        XCTAssertEqual(steps.map(\.name), ["heartbeats", "workout_samples"])
        XCTAssertEqual(steps.map(\.total), [made.heartbeatSeries.count, made.links])
        XCTAssertEqual(steps.map(\.done), [0, 0])
        let before = try await answers(try XCTUnwrap(store), healthgate, database, made)
        XCTAssertEqual(before.samples, made.samples, "the heart rates stay samples, with their uuids")
        XCTAssertEqual(before.heartbeatSeries, made.heartbeatSeries, "every beat")
        for (workout, stored) in zip(made.workouts, before.workouts) {
            XCTAssertEqual(stored?.workout, workout)
            XCTAssertEqual(stored?.samples, made.linked[workout.id]?.samples, "by reference, what its links listed")
            XCTAssertEqual(stored?.heartbeatSeries, made.linked[workout.id]?.series)
        }
        // The statistics against the rows: each minute's count, minimum and maximum, overall and
        // for each strap.
        XCTAssertEqual(before.minutes.count, 60)
        let byMinute = Dictionary(grouping: made.samples.map(\.quantity.value).indices) { index in
            Int(made.samples[index].startDate.timeIntervalSince(Self.start)) / 60
        }
        for (minute, bucket) in before.minutes.enumerated() {
            let values = (byMinute[minute] ?? []).map { made.samples[$0].quantity.value }
            XCTAssertEqual(bucket.overall.sampleCount, values.count)
            XCTAssertEqual(bucket.overall.minimum, values.min())
            XCTAssertEqual(bucket.overall.maximum, values.max())
            XCTAssertEqual(bucket.devices.map(\.statistics.sampleCount).reduce(0, +), values.count)
            XCTAssertEqual(bucket.devices.count, 30)
        }
        XCTAssertEqual(before.hour.map(\.overall.sampleCount), [made.samples.count])
        let answeredIn = ContinuousClock.now - began - madeIn

        // Killed halfway through the beats: the store is dropped without closing.
        var batches = 0
        while try await store?.migrationSteps().first?.done ?? 0 < made.heartbeatSeries.count / 2 {
            _ = try await store?.migrateBatch()
            batches += 1
        }
        store = nil
        XCTAssertEqual(batches, made.heartbeatSeries.count / 2 / HealthStore.migrationSeriesBatch)
        let halfway = try await HealthStore.open(path: database, access: .readOnly)
        let afterKill = try await halfway.migrationSteps()
        XCTAssertEqual(afterKill.map(\.done), [made.heartbeatSeries.count / 2, 0])
        // Halfway, what the migration moves reads the same: every series (half of them from
        // their blobs, half from `heartbeats`) and workouts, which no longer read their links.
        let seriesHalfway = try await halfway.heartbeatSeries(from: Self.start, to: Self.end)
        XCTAssertEqual(seriesHalfway, before.heartbeatSeries, "halfway, every beat")
        for (index, workout) in made.workouts.enumerated().prefix(3) {
            let stored = try await halfway.workout(id: workout.id)
            XCTAssertEqual(stored, before.workouts[index], "halfway, workout \(index)")
        }
        await halfway.close()

        // The gateway resumes the migration and its remote sink follows the log from the cursor
        // the previous release left.
        let server = try RecordingServer.started(in: healthgate.root)
        let configuration = healthgate.root.appendingPathComponent("config.json")
        try """
            {"store": {"path": "\(database)"},
             "sinks": [{"kind": "sqlite", "name": "store"},
                       {"kind": "http-repository", "name": "\(made.follower)", "config": {
                "url": "\(server.url)", "batchSize": 1000, "batchIntervalSeconds": 0, "maxInFlight": 2}}]}
            """.write(to: configuration, atomically: true, encoding: .utf8)
        let resumed = ContinuousClock.now
        let gateway = try healthgate.start(["run", "--config", configuration.path])
        let reader = try await HealthStore.open(path: database, access: .readOnly)
        try await waitUntil(timeout: .seconds(120), "the follower reaches the latest anchor \(made.latest)") {
            try await reader.follower(made.follower)?.anchor == made.latest
        }
        // status until every step has finished (each answer is a fresh process: no sleep between).
        var report: [[String: Any]] = []
        let deadline = ContinuousClock.now + .seconds(120)
        while !(report.count == 2 && report.allSatisfy({ $0["finished"] as? Bool == true })) {
            XCTAssertLessThan(ContinuousClock.now, deadline, "status does not say the migration finished: \(report)")
            if ContinuousClock.now > deadline { return }
            let status = try await healthgate.run(["status", "--config", configuration.path, "--format", "json"])
            let object = try? JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
            report = object?["migration"] as? [[String: Any]] ?? []
        }
        let caughtUp = ContinuousClock.now - resumed
        XCTAssertEqual(report.map { $0["done"] as? Int }, [made.heartbeatSeries.count, made.links])
        let result = try await gateway.terminate(timeout: .seconds(60))
        let log = result.standardError
        XCTAssertTrue(
            log.contains("store migration: started in the background, ingest goes on; heartbeats 900/1800, workout_samples 0/\(made.links)"),
            log)
        let end = try XCTUnwrap(log.split(separator: "\n").first { $0.contains("store migration: finished in ") }, log)
        XCTAssertTrue(end.hasSuffix("; heartbeats 1800/1800 (finished), workout_samples \(made.links)/\(made.links) (finished)"), String(end))
        XCTAssertTrue(log.contains("begun before the last stop is sent under a new key"), log)

        // What the repository received: every object after the cursor once, but those of the
        // batch it had acknowledged; nothing before the cursor.
        let received = server.acceptedCounts()
        let expected = Set(made.unsent.map { $0.uuidString.lowercased() })
        XCTAssertEqual(Set(received.keys), expected, "only what the follower had not sent")
        XCTAssertEqual(received.values.filter { $0 != 1 }.count, 0, "each once")
        let skipped = made.anchors.filter { $0.value > made.batches[1].after && $0.value <= made.batches[1].through }
        XCTAssertEqual(skipped.count, 1000)
        XCTAssertTrue(skipped.keys.allSatisfy { received[$0.uuidString.lowercased()] == nil }, "the acknowledged batch is not sent again")

        // After the end: the same answers, the legacy tables gone, every anchor kept.
        let after = try await answers(reader, healthgate, database, made)
        XCTAssertEqual(after, before, "after the migration, every answer is the same")
        let changes = try await reader.changes(since: 0)
        XCTAssertEqual(
            Dictionary(uniqueKeysWithValues: zip(changes.added.map(\.id), changes.addedAnchors)), made.anchors, "every object at its anchor")
        XCTAssertEqual(changes.deleted, made.deleted)
        let migrated = try await reader.migrationSteps()
        XCTAssertTrue(migrated.allSatisfy { $0.finished != nil && $0.done == $0.total }, "\(migrated)")
        await reader.close()
        let sqlite = { (sql: String) throws -> String in
            let result = try runProcess("/usr/bin/sqlite3", ["-cmd", ".timeout 5000", database, sql])
            XCTAssertEqual(result.status, 0, result.error)
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertEqual(try sqlite("PRAGMA integrity_check"), "ok")
        XCTAssertEqual(try sqlite("SELECT name FROM sqlite_schema WHERE name IN ('heartbeats', 'workout_samples')"), "")
        XCTAssertEqual(try sqlite("SELECT count(*) FROM heartbeat_series WHERE beats IS NULL"), "0")
        print(
            "class-hour upgrade: made in \(madeIn), answered in \(answeredIn), \(batches) batches before the kill; the resumed "
                + "gateway caught up in \(caughtUp) (\(end.split(separator: " ").drop { $0 != "store" }.joined(separator: " "))), "
                + "\(received.count) objects sent; the whole test \(ContinuousClock.now - began)")
    }
}
