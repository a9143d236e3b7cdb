import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import SQLite
import Workouts
import XCTest

/// The workout in progress survives SIGKILL of the built executable: the demo's simulated
/// heart-rate monitor and pedometer feed a workout that is killed while running and while paused,
/// restarted each time, and ended. Checked against the SQLite file directly: every committed
/// sample in the running intervals is linked, the statistics equal a recomputation from the
/// store, heartbeat series are linked by overlap, every acknowledged command is there, and the
/// file passes `PRAGMA integrity_check` after every kill.
final class WorkoutCrashTests: XCTestCase {
    /// The profile of the run: zones (maximum 190) and the Keytel energy equation.
    static let profile = UserProfile(
        maximumHeartRate: 190, dateOfBirth: "1990-06-01", weightKilograms: 72, biologicalSex: .female)

    func testKillsWhileRunningAndWhilePausedLoseNothingCommittedOrAcknowledged() async throws {
        let healthgate = try HealthgateExecutable()
        defer { try? FileManager.default.removeItem(at: healthgate.root) }
        let database = healthgate.root.appendingPathComponent("crash.sqlite").path
        let config = healthgate.root.appendingPathComponent("config.json")
        try Data("""
            {"profile": {"maximumHeartRate": 190, "dateOfBirth": "1990-06-01", "weightKilograms": 72, "biologicalSex": "female"}}
            """.utf8).write(to: config)
        // The state file of an older healthgate is ignored, and the log says so.
        let oldStateFile = healthgate.root.appendingPathComponent("state/healthgate/workout-session.json")
        try FileManager.default.createDirectory(at: oldStateFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(#"{"version": 1, "pendingWorkouts": []}"#.utf8).write(to: oldStateFile)
        let arguments = ["demo", "--db", database, "--config", config.path, "--quiet"]
        var daemon = try healthgate.start(arguments)
        var kills = 0

        func restart(expecting state: String) async throws {
            daemon = try healthgate.start(arguments)
            let status = try await Self.waitForStatus(healthgate)
            XCTAssertEqual(status["state"] as? String, state, "after kill \(kills)")
            XCTAssertEqual(status["restored"] as? Bool, true)
        }
        func kill() async throws {
            let before = try Self.heartRates(database)
            try await Self.waitUntilCommitted(database, moreThan: before)
            daemon.send(SIGKILL)
            _ = try await daemon.waitForExit(timeout: .seconds(30))
            kills += 1
            XCTAssertEqual(try Self.integrityCheck(database), "ok", "after kill \(kills)")
        }

        _ = try await Self.waitForStatus(healthgate)
        XCTAssertTrue(daemon.standardError.contains("ignoring \(oldStateFile.path)"), daemon.standardError)
        let started = try await Self.command(healthgate, "start", "--activity", "running")
        let workoutID = try XCTUnwrap(started["workoutID"] as? String)
        try await Self.waitUntilCommitted(database, moreThan: try Self.heartRates(database))

        try await kill()  // 1: while running
        try await restart(expecting: "running")
        _ = try await Self.command(healthgate, "lap")
        _ = try await Self.command(healthgate, "pause")
        try await kill()  // 2: while paused, samples still arriving
        try await restart(expecting: "paused")
        try await kill()  // 3: paused again, right after the restart
        try await restart(expecting: "paused")
        _ = try await Self.command(healthgate, "resume")
        try await kill()  // 4: running again
        try await restart(expecting: "running")
        try await kill()  // 5: running, right after the restart
        try await restart(expecting: "running")
        try await Self.waitUntilCommitted(database, moreThan: try Self.heartRates(database))
        let ended = try await Self.command(healthgate, "end")
        XCTAssertEqual(ended["state"] as? String, "ended")

        // A graceful stop flushes the heartbeat series being recorded; it overlaps the end.
        try await waitUntil(timeout: .seconds(30), "the workout in the store") {
            (try? Self.query(database, "SELECT count(*) FROM workouts").first?.integer(0)) == 1
        }
        try await daemon.terminate()
        XCTAssertEqual(try Self.integrityCheck(database), "ok")

        try await Self.verify(database: database, workoutID: workoutID, kills: kills)
    }

    /// Checks the stored workout against the store's own samples.
    static func verify(database: String, workoutID: String, kills: Int) async throws {
        let id = try XCTUnwrap(SampleID(string: workoutID))
        let key = SQLiteValue.blob(id.bytes)
        XCTAssertEqual(try query(database, "SELECT count(*) FROM live_workouts").first?.integer(0), 0)
        let row = try XCTUnwrap(try query(database, "SELECT start_us, end_us, duration FROM workouts WHERE uuid = ?1", [key]).first)
        let start = try XCTUnwrap(row.integer(0)), end = try XCTUnwrap(row.integer(1))

        // Every acknowledged command: lap, pause, resume, in that order.
        let events = try query(database, "SELECT type, start_us FROM workout_events WHERE workout_uuid = ?1 ORDER BY event_index", [key])
        XCTAssertEqual(events.compactMap { $0.text(0) }, ["lap", "pause", "resume"])
        let pause = try XCTUnwrap(events[1].integer(1)), resume = try XCTUnwrap(events[2].integer(1))
        let intervals = [(start, pause), (resume, end)]
        let timeline = RunningTimeline(intervals.map {
            RunningInterval(start: date($0.0), end: date($0.1))
        })
        XCTAssertEqual(row.double(2) ?? 0, Double(pause - start + end - resume) / 1e6, accuracy: 1e-6)

        // Quantity samples (a series' quantities each as one): the workout's exactly when their
        // end lies in a running interval and their device is nobody's: the demo's ANT+ class is
        // worn by participants of its own (Quinn, …), so the gateway's own workout leaves their
        // straps to them. The stored workout finds them by its time, types and devices.
        let store = try HealthStore(path: database, access: .readOnly)
        let found = try await store.workout(id: id)
        let read = try XCTUnwrap(found)
        func running(_ date: Date) -> Bool { intervals.contains { date >= Self.date($0.0) && date <= Self.date($0.1) } }
        func worn(_ device: Device?) -> Bool { device?.radioIdentifier?.hasPrefix("ant:") ?? false }
        var expected: [QuantitySample] = []
        var duringPause = 0
        for type in WorkoutDefinition.defaultTypes {
            let all = try await store.samples(of: type, from: date(start - 3_600_000_000), to: date(end))
            expected += all.filter { running($0.endDate) && !worn($0.device) }
            duringPause += all.filter { type == .heartRate && $0.endDate > date(pause) && $0.endDate < date(resume) }.count
        }
        XCTAssertEqual(Set(expected.map(\.id)), Set(read.samples.map(\.id)), "the workout's samples = committed samples in the running intervals")
        XCTAssertGreaterThan(expected.filter { $0.type == .heartRate }.count, 5)
        XCTAssertGreaterThan(duringPause, 0, "the pause had heart rates")
        XCTAssertFalse(read.samples.contains { $0.endDate > date(pause) && $0.endDate < date(resume) }, "and they are not the workout's")

        // Heartbeat series: the workout's exactly when they overlap a running interval.
        let expectedSeries = try await store.heartbeatSeries().filter { series in
            !worn(series.device) && intervals.contains { series.startDate <= Self.date($0.1) && series.endDate >= Self.date($0.0) }
        }
        XCTAssertEqual(Set(expectedSeries.map(\.id)), Set(read.heartbeatSeries.map(\.id)))
        XCTAssertFalse(read.heartbeatSeries.isEmpty, "the series recorded at the end is the workout's")

        // Statistics: a recomputation from the store's samples equals what was stored.
        let samples = expected.sorted { ($0.endDate, $0.id) < ($1.endDate, $1.id) }.map { sample in
            CollectedSample(
                id: sample.id, type: sample.type, startDate: sample.startDate, endDate: sample.endDate, value: sample.canonicalValue)
        }
        let analysis = WorkoutAnalysis.analyse(
            samples: samples, types: WorkoutDefinition.defaultTypes, timeline: timeline, window: (date(start), date(end)),
            isLive: false, profile: profile)
        let stored = try query(
            database,
            "SELECT type, sample_count, sum, average, minimum, maximum FROM workout_statistics WHERE owner_uuid = ?1", [key])
        XCTAssertEqual(Set(stored.compactMap { $0.text(0) }), Set(analysis.statistics.map(\.type.identifier)))
        for statistics in analysis.statistics {
            let row = try XCTUnwrap(stored.first { $0.text(0) == statistics.type.identifier })
            XCTAssertEqual(row.integer(1), Int64(statistics.sampleCount), statistics.type.identifier)
            for (column, value) in [(2, statistics.sum), (3, statistics.average), (4, statistics.minimum), (5, statistics.maximum)] {
                // The time-weighted heart-rate average is recomputed here from the store's
                // microsecond timestamps; the live one used the clock's. With several sources
                // interleaving (the demo's strap and its broadcasting Polar straps) every step
                // carries up to 1 µs of that rounding: a few millionths of a bpm.
                let accuracy = statistics.type == .heartRate && column == 3 ? 1e-4 : 1e-6
                XCTAssertEqual(row.double(column) ?? -1, value ?? -1, accuracy: accuracy, "\(statistics.type.identifier) column \(column)")
            }
        }
        let energy = try XCTUnwrap(analysis.energyKilocalories)
        XCTAssertEqual(stored.first { $0.text(0) == "activeEnergyBurned" }?.double(2) ?? -1, energy, accuracy: 1e-6)
        let metadata = try query(
            database,
            "SELECT e.key, e.value FROM workouts w JOIN metadata_set_entries e ON e.set_id = w.metadata_set_id WHERE w.uuid = ?1",
            [key])
        func metadataValue(_ name: String) -> SQLiteValue? { metadata.first { $0.text(0) == name }?.values[1] }
        XCTAssertEqual(analysis.zoneSeconds.count, 5)
        for (index, seconds) in analysis.zoneSeconds.enumerated() {
            guard case .real(let stored)? = metadataValue("healthgate.zone\(index + 1)Seconds") else {
                return XCTFail("no zone \(index + 1) seconds in \(metadata)")
            }
            XCTAssertEqual(stored, seconds, accuracy: 1e-6, "zone \(index + 1)")
        }
        XCTAssertNotNil(metadataValue("healthgate.restoredAfterRestart"))
        print("workout crash suite: \(kills) SIGKILLs, \(read.samples.count) samples and \(read.heartbeatSeries.count) heartbeat series the workout reads, "
            + "\(expected.count) committed in the running intervals, energy \(energy) kcal")
    }

    // MARK: Helpers

    static func date(_ microseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(microseconds) / 1e6) }

    static func query(_ database: String, _ sql: String, _ bindings: [SQLiteValue] = []) throws -> [SQLiteRow] {
        try SQLiteConnection(path: database, mode: .readOnly).query(sql, bindings)
    }

    static func count(_ database: String, _ table: String) throws -> Int64 {
        guard FileManager.default.fileExists(atPath: database) else { return 0 }
        return try query(database, "SELECT count(*) FROM \(table)").first?.integer(0) ?? 0
    }

    static func integrityCheck(_ database: String) throws -> String? {
        try query(database, "PRAGMA integrity_check").first?.text(0)
    }

    /// Waits until the store holds more heart-rate samples than `count` (so the kill lands among
    /// the workout's commits; the demo's glucose meter and CGM commit their stored records at
    /// start, which say nothing of the workout).
    static func waitUntilCommitted(_ database: String, moreThan count: Int64) async throws {
        try await waitUntil(timeout: .seconds(60), "heart-rate samples committed beyond \(count)") {
            ((try? Self.heartRates(database)) ?? 0) > count + 2
        }
    }

    /// The heart-rate samples of the demo's connected strap in the store: the one that records
    /// heartbeat series (the ANT+ class and the broadcasting straps are heard sooner after a
    /// restart, and the ANT+ class is its participants', not the workout's).
    static func heartRates(_ database: String) throws -> Int64 {
        try StoredReadings.count(of: "heartRate", fromDevicesLike: "healthgate/SIM-HRM-%", in: database)
    }

    /// Polls `workout status` until the daemon answers (after a kill its socket file is stale).
    static func waitForStatus(_ healthgate: HealthgateExecutable) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let result = try await healthgate.run(["workout", "status", "--format", "json"])
            if result.status == 0,
                let status = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
            {
                return status
            }
            guard ContinuousClock.now < deadline else { throw WaitTimeout(what: "the daemon's workout status: \(result.standardError)") }
        }
    }

    static func command(_ healthgate: HealthgateExecutable, _ arguments: String...) async throws -> [String: Any] {
        let result = try await healthgate.run(["workout"] + arguments + ["--format", "json"])
        XCTAssertEqual(result.status, 0, "\(arguments): \(result.standardError)")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }
}
