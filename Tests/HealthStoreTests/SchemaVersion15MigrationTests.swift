import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import SQLite
import XCTest

/// A store of schema version 14, made by that version's own migrations and holding rows in its
/// shape (a beat a row in `heartbeats`, a workout's samples linked in `workout_samples`), opens
/// at version 15 and its background migration moves the beats into blobs and deletes the links
/// in small batches, resuming after the store was dropped without closing: every beat, sample,
/// series, workout (read by reference), anchor, tombstone and follower cursor is as before, and
/// `PRAGMA integrity_check` is `ok`.
final class SchemaVersion15MigrationTests: StoreTestCase {
    static let straps = (0..<3).map { index in
        Device(name: "Strap \(index)", manufacturer: "Polar", localIdentifier: "AA:BB:CC:00:00:0\(index)")
    }

    /// What the version-14 file holds.
    struct Class {
        var samples: [QuantitySample] = []
        var heartbeatSeries: [HeartbeatSeriesSample] = []
        var workouts: [Workout] = []
        /// Each workout's linked samples and series, as version 14 read them back.
        var linked: [SampleID: (samples: [QuantitySample], series: [HeartbeatSeriesSample])] = [:]
        var deleted: [StoreChanges.Deletion] = []
        /// Every object's anchor.
        var anchors: [SampleID: Int64] = [:]
        var latest: Int64 = 0
        var links = 0
        /// The follower's cursor.
        var cursor: Int64 = 0
    }

    /// Three straps over five minutes at 1 Hz, a heartbeat series a minute of each (70 beats),
    /// a workout a strap over the five minutes with its samples and series linked, two samples
    /// deleted, and a follower halfway through the log, written as version 14 wrote them.
    func makeVersion14File() throws -> Class {
        let ids = makeIDs()
        let connection = try SQLiteConnection(path: path)
        try connection.migrate(Array(StoreSchema.migrations.prefix(14)))
        XCTAssertEqual(try connection.userVersion, 14)
        var made = Class()
        try connection.execute("BEGIN")
        for (index, strap) in Self.straps.enumerated() {
            try connection.run(
                "INSERT INTO devices (id, name, manufacturer, local_identifier) VALUES (?1, ?2, ?3, ?4)",
                [.integer(Int64(index + 1)), .text(strap.name ?? ""), .text(strap.manufacturer ?? ""), .text(strap.localIdentifier ?? "")])
        }
        try connection.execute("""
            INSERT INTO quantity_types (id, identifier, max_duration_us) VALUES (1, 'heartRate', 0);
            INSERT INTO units (id, unit) VALUES (1, 'count/min');
            """)
        // The first strap's samples carry its sensor location, in a set of version 2's encoding.
        let located: Metadata = [MetadataKey("heartRateSensorLocation"): .string("chest")]
        try connection.run("INSERT INTO metadata_sets (id, canonical) VALUES (1, ?1)", [.blob(StoreSchema.canonicalEncoding(of: located))])
        try connection.execute(
            "INSERT INTO metadata_entries (set_id, key, value_type, value) VALUES (1, 'heartRateSensorLocation', 'string', 'chest')")
        var anchor: Int64 = 0
        func next() -> Int64 {
            anchor += 1
            return anchor
        }
        for second in 0..<300 {
            for (index, strap) in Self.straps.enumerated() {
                let sample = try heartRate(
                    ids, Double(60 + (second * 7 + index * 13) % 90), at: Double(second), device: strap,
                    metadata: index == 0 ? located : Metadata())
                let sampleAnchor = next()
                try connection.run(
                    """
                    INSERT INTO samples (anchor, uuid, type_id, value, unit_id, start_us, duration_us, device_id, metadata_set_id)
                    VALUES (?1, ?2, 1, ?3, 1, ?4, 0, ?5, ?6)
                    """,
                    [.integer(sampleAnchor), .blob(sample.id.bytes), .real(sample.quantity.value),
                     .integer(StoreTime.microseconds(sample.startDate)), .integer(Int64(index + 1)), index == 0 ? .integer(1) : .null])
                made.samples.append(sample)
                made.anchors[sample.id] = sampleAnchor
            }
            guard second % 60 == 59 else { continue }
            for (index, strap) in Self.straps.enumerated() {
                // 70 beats over the minute, RR intervals in 1/1024 s as the straps send them.
                var ticks = 0
                let beats = (0..<70).map { beat in
                    ticks += 820 + (beat * 37 + index * 11) % 50
                    return Heartbeat(timeSinceSeriesStart: Double(ticks) / 1024, precededByGap: beat == 35 && index == 1)
                }
                let start = Double(second - 59)
                let series = try HeartbeatSeriesSample(
                    id: ids.next(), start: at(start), end: at(start + 60), beats: beats, device: strap)
                let seriesAnchor = next()
                try connection.run(
                    """
                    INSERT INTO heartbeat_series (anchor, uuid, start_us, end_us, beat_count, device_id)
                    VALUES (?1, ?2, ?3, ?4, 70, ?5)
                    """,
                    [.integer(seriesAnchor), .blob(series.id.bytes), .integer(StoreTime.microseconds(series.startDate)),
                     .integer(StoreTime.microseconds(series.endDate)), .integer(Int64(index + 1))])
                for (number, beat) in beats.enumerated() {
                    try connection.run(
                        "INSERT INTO heartbeats (series_uuid, beat_index, time_since_start, preceded_by_gap) VALUES (?1, ?2, ?3, ?4)",
                        [.blob(series.id.bytes), .integer(Int64(number)), .real(beat.timeSinceSeriesStart), .integer(beat.precededByGap ? 1 : 0)])
                }
                made.heartbeatSeries.append(series)
                made.anchors[series.id] = seriesAnchor
            }
        }
        // A workout a strap, its samples and series linked.
        for (index, strap) in Self.straps.enumerated() {
            var metadata = Metadata()
            metadata[.workoutDevices] = .string(strap.localIdentifier ?? "")
            let workout = Workout(
                id: ids.next(), activityType: .running, startDate: at(0), endDate: at(300), duration: 300,
                statistics: [QuantityStatistics(type: .heartRate, startDate: at(0), endDate: at(300), sampleCount: 300, average: 100)],
                metadata: metadata)
            let canonical = StoreSchema.canonicalEncoding(of: metadata)
            try connection.run("INSERT INTO metadata_sets (id, canonical) VALUES (?1, ?2)", [.integer(Int64(index + 2)), .blob(canonical)])
            try connection.run(
                "INSERT INTO metadata_entries (set_id, key, value_type, value) VALUES (?1, 'healthgate.devices', 'string', ?2)",
                [.integer(Int64(index + 2)), .text(strap.localIdentifier ?? "")])
            let workoutAnchor = next()
            try connection.run(
                """
                INSERT INTO workouts (anchor, uuid, activity_type, start_us, end_us, duration, metadata_set_id)
                VALUES (?1, ?2, 'running', ?3, ?4, 300, ?5)
                """,
                [.integer(workoutAnchor), .blob(workout.id.bytes), .integer(StoreTime.microseconds(workout.startDate)),
                 .integer(StoreTime.microseconds(workout.endDate)), .integer(Int64(index + 2))])
            try connection.run(
                """
                INSERT INTO workout_statistics (owner_uuid, workout_uuid, type, start_us, end_us, sample_count, average)
                VALUES (?1, ?1, 'heartRate', ?2, ?3, 300, 100)
                """,
                [.blob(workout.id.bytes), .integer(StoreTime.microseconds(workout.startDate)),
                 .integer(StoreTime.microseconds(workout.endDate))])
            let samples = made.samples.filter { $0.device == strap }
            let series = made.heartbeatSeries.filter { $0.device == strap }
            for id in samples.map(\.id) + series.map(\.id) {
                try connection.run(
                    "INSERT INTO workout_samples (workout_uuid, sample_uuid) VALUES (?1, ?2)", [.blob(workout.id.bytes), .blob(id.bytes)])
                made.links += 1
            }
            made.workouts.append(workout)
            made.linked[workout.id] = (samples, series)
            made.anchors[workout.id] = workoutAnchor
        }
        // Two samples deleted, each leaving a tombstone (the workout keeps listing it).
        for victim in [made.samples[10], made.samples[500]] {
            try connection.run("DELETE FROM samples WHERE uuid = ?1", [.blob(victim.id.bytes)])
            let tombstone = next()
            try connection.run(
                "INSERT INTO tombstones (anchor, uuid, kind, type, deleted_us, device) VALUES (?1, ?2, 'quantity', 'heartRate', ?3, ?4)",
                [.integer(tombstone), .blob(victim.id.bytes), .integer(StoreTime.microseconds(at(400))), .text(victim.device?.localIdentifier ?? "")])
            made.samples.removeAll { $0.id == victim.id }
            made.anchors[victim.id] = nil
            made.deleted.append(StoreChanges.Deletion(
                id: victim.id, kind: .quantity, type: "heartRate", anchor: tombstone, device: victim.device?.localIdentifier))
        }
        for workout in made.workouts {
            made.linked[workout.id]?.samples.removeAll { sample in made.deleted.contains { $0.id == sample.id } }
        }
        made.latest = anchor
        made.cursor = anchor / 2
        try connection.run("UPDATE anchors SET latest = ?1", [.integer(anchor)])
        try connection.run(
            "INSERT INTO followers (name, anchor, skipped, updated_us) VALUES ('broker', ?1, 0, ?2)",
            [.integer(made.cursor), .integer(StoreTime.microseconds(at(400)))])
        try connection.run(
            "INSERT INTO log_commits (last_anchor, committed_us, bytes) VALUES (?1, ?2, 80000)",
            [.integer(anchor), .integer(StoreTime.microseconds(at(400)))])
        try connection.execute("COMMIT")
        return made
    }

    /// Every check of what a reader sees: the same before, during and after the background
    /// migration.
    func check(_ store: HealthStore, _ made: Class, _ label: String) async throws {
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
        let cursor = try await store.follower("broker")?.anchor
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
        let fresh = try (0..<20).map { try heartRate(ids, 90, at: 400 + Double($0), device: Self.straps[0]) }
        let freshBeats = try HeartbeatSeriesSample(
            id: ids.next(), start: at(400), end: at(402),
            beats: [Heartbeat(timeSinceSeriesStart: 0.5, precededByGap: false), Heartbeat(timeSinceSeriesStart: 1.25, precededByGap: false)],
            device: Self.straps[0])
        do {
            let store = try HealthStore(path: path)
            XCTAssertEqual(try sqlite3("PRAGMA user_version"), "15")
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
