import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import HealthStoreTesting
import SQLite
import XCTest

/// A store of schema version 14, made by that version's own migrations and holding rows in its
/// shape (a beat a row in `heartbeats`, a workout's samples linked in `workout_samples`), opens
/// at version 15 and its background migration moves the beats into blobs and deletes the links
/// in small batches, resuming after the store was dropped without closing: every beat, sample,
/// series, workout (read by reference), anchor, tombstone and follower cursor is as before, and
/// `PRAGMA integrity_check` is `ok`.
final class SchemaVersion15MigrationTests: StoreTestCase {
    /// Three straps over five minutes at 1 Hz, a heartbeat series a minute of each (70 beats),
    /// a workout a strap over the five minutes with its samples and series linked, two samples
    /// deleted, and a follower halfway through the log, written as version 14 wrote them.
    func makeVersion14File() throws -> PreviousSchemaStore.ClassContents {
        let made = try PreviousSchemaStore.make(path: path, PreviousSchemaStore.Class(straps: 3, seconds: 300, deletedSamples: [10, 500], start: t0))
        XCTAssertEqual(try sqlite3("PRAGMA user_version"), "14")
        return made
    }

    /// Every check of what a reader sees: the same before, during and after the background
    /// migration.
    func check(_ store: HealthStore, _ made: PreviousSchemaStore.ClassContents, _ label: String) async throws {
        let samples = try await store.samples(of: .heartRate, to: at(300))
        XCTAssertEqual(samples, made.samples, "\(label): the old heart rates stay samples, with their uuids")
        let series = try await store.heartbeatSeries(to: at(300))
        XCTAssertEqual(series, made.heartbeatSeries, "\(label): every beat")
        let statistics = try await store.statisticsCollection(
            of: .heartRate, from: at(0), to: at(300), anchor: at(0), interval: .seconds(60))
        XCTAssertEqual(statistics.map(\.sampleCount), [179, 180, 179, 180, 180], label)
        for workout in made.workouts {
            let stored = try await store.workout(id: workout.id)
            XCTAssertEqual(stored?.workout, workout, label)
            XCTAssertEqual(stored?.samples, made.linked[workout.id]?.samples, "\(label): by reference, what the links listed")
            XCTAssertEqual(stored?.heartbeatSeries, made.linked[workout.id]?.series, label)
        }
        // Anchors kept: a follower resumes where it was, nothing sent again as new.
        let all = try await store.changes(since: 0)
        let kept = zip(all.added, all.addedAnchors).filter { made.anchors[$0.0.id] != nil }
        XCTAssertEqual(kept.count, made.anchors.count, label)
        XCTAssertTrue(kept.allSatisfy { made.anchors[$0.0.id] == $0.1 }, "\(label): every object at its anchor")
        XCTAssertEqual(all.deleted, made.deleted, label)
        let cursor = try await store.follower(made.follower)?.anchor
        XCTAssertEqual(cursor, made.cursor, label)
        let pending = try await store.changes(since: made.cursor)
        XCTAssertEqual(
            pending.added.prefix { made.anchors[$0.id] != nil }.map(\.id),
            made.anchors.filter { $0.value > made.cursor }.sorted { $0.value < $1.value }.map(\.key), label)
    }

    func testAVersion14StoreMigratesInBatchesResumesAfterADropAndKeepsEverything() async throws {
        let made = try makeVersion14File()
        XCTAssertThrowsError(try HealthStore(path: path, access: .readOnly)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .schemaTooOld)
        }
        let ids = SampleIDGenerator(seed: 9, milliseconds: { 1_800_058_000_000 })
        let fresh = try (0..<20).map { try heartRate(ids, 90, at: 400 + Double($0), device: made.straps[0]) }
        let freshBeats = try HeartbeatSeriesSample(
            id: ids.next(), start: at(400), end: at(402),
            beats: [Heartbeat(timeSinceSeriesStart: 0.5, precededByGap: false), Heartbeat(timeSinceSeriesStart: 1.25, precededByGap: false)],
            device: made.straps[0])
        do {
            let store = try HealthStore(path: path)
            XCTAssertEqual(try sqlite3("PRAGMA user_version"), String(StoreSchema.version))
            let steps = try await store.migrationSteps()
            XCTAssertEqual(steps.map(\.name), ["heartbeats", "workout_samples"])
            XCTAssertEqual(steps.map(\.total), [15, made.links])
            XCTAssertEqual(steps.map(\.done), [0, 0])
            XCTAssertEqual(steps.map(\.finished), [nil, nil])
            try await check(store, made, "before the migration")

            // Four series a batch; while it runs, the gateway writes heart rates (now a series)
            // and a heartbeat series.
            for batch in 0..<2 {
                let progress = try await store.migrateBatch(seriesLimit: 4, linkLimit: 250)
                XCTAssertEqual(progress.first?.done, 4 * (batch + 1))
                if batch == 0 { try await store.write(fresh.map(HealthRecord.quantity) + [.heartbeatSeries(freshBeats)]) }
            }
            try await check(store, made, "halfway through the beats")
        }
        // Killed: the store was dropped without closing; the next start resumes where it stopped.
        let resumed = try HealthStore(path: path)
        let afterDrop = try await resumed.migrationSteps()
        XCTAssertEqual(afterDrop.map(\.done), [8, 0])
        var batches = 0
        var last = afterDrop
        while last.contains(where: { $0.finished == nil }) {
            last = try await resumed.migrateBatch(seriesLimit: 4, linkLimit: 250)
            batches += 1
            XCTAssertLessThan(batches, 50)
            if batches == 3 { try await check(resumed, made, "the beats moved, the links not yet") }
        }
        // 7 series left (two batches, and one that finds none and drops the table), the links
        // 250 a batch (and one that finds none).
        XCTAssertEqual(batches, 3 + (made.links + 249) / 250 + 1)
        XCTAssertEqual(last.map(\.done), [15, made.links])
        XCTAssertTrue(last.allSatisfy { $0.finished != nil })
        let tables = try sqlite3("SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN ('heartbeats', 'workout_samples')")
        XCTAssertEqual(tables, "", "the emptied tables are dropped")
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM heartbeat_series WHERE beats IS NULL"), "0")
        XCTAssertEqual(try sqlite3("PRAGMA integrity_check"), "ok")
        XCTAssertEqual(try sqlite3("PRAGMA foreign_key_check"), "")
        try await check(resumed, made, "after the migration")
        // What was written meanwhile is there too, and a batch after the end changes nothing.
        let freshStored = try await resumed.samples(of: .heartRate, from: at(400))
        XCTAssertEqual(freshStored, try storedQuantities(fresh))
        let freshSeries = try await resumed.heartbeatSeries(from: at(400))
        XCTAssertEqual(freshSeries, [freshBeats])
        let again = try await resumed.migrateBatch()
        XCTAssertEqual(again, last)
    }

    func testAVersion14StoreWithNothingToMoveFinishesAtOnce() async throws {
        let connection = try SQLiteConnection(path: path)
        try connection.migrate(Array(StoreSchema.migrations.prefix(14)))
        _ = try HealthStore(path: path)
        XCTAssertEqual(try sqlite3("SELECT step, finished_us IS NOT NULL FROM store_migrations ORDER BY step"), "heartbeats|1\nworkout_samples|1")
        XCTAssertEqual(
            try sqlite3("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('heartbeats', 'workout_samples')"), "0")
    }
}
