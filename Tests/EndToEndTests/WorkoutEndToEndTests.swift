import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// A workout driven from the CLI against a running daemon with demo devices, then read back from
/// the store and checked against the samples it refers to (by its time and devices: a stored
/// workout lists no sample ids).
final class WorkoutEndToEndTests: XCTestCase {
    func testStartPauseResumeLapEndThenTheStoredWorkoutMatchesItsSamples() async throws {
        let healthgate = try HealthgateExecutable()
        let (daemon, database) = try await healthgate.startDemo(store: "workout.sqlite")

        let atStart = try await Self.heartRateSamples(healthgate, database: database, source: Self.ownMonitor).count
        let started = try await Self.snapshot(healthgate, ["workout", "start", "--activity", "running", "--format", "json"])
        XCTAssertEqual(started["state"] as? String, "running")
        let workoutID = try XCTUnwrap(started["workoutID"] as? String)

        try await Self.waitForHeartRateSamples(healthgate, database: database, source: Self.ownMonitor, atLeast: atStart + 3)
        let paused = try await Self.snapshot(healthgate, ["workout", "pause", "--format", "json"])
        XCTAssertEqual(paused["state"] as? String, "paused")
        // Samples keep arriving while paused; they must not be collected.
        let atPause = try await Self.heartRateSamples(healthgate, database: database, source: Self.ownMonitor).count
        try await Self.waitForHeartRateSamples(healthgate, database: database, source: Self.ownMonitor, atLeast: atPause + 3)
        let resumed = try await Self.snapshot(healthgate, ["workout", "resume", "--format", "json"])
        XCTAssertEqual(resumed["state"] as? String, "running")
        let atResume = try await Self.heartRateSamples(healthgate, database: database, source: Self.ownMonitor).count
        try await Self.waitForHeartRateSamples(healthgate, database: database, source: Self.ownMonitor, atLeast: atResume + 2)
        _ = try await Self.snapshot(healthgate, ["workout", "lap", "--format", "json"])
        try await Self.waitForHeartRateSamples(healthgate, database: database, source: Self.ownMonitor, atLeast: atResume + 4)
        let ended = try await Self.snapshot(healthgate, ["workout", "end", "--format", "json"])
        XCTAssertEqual(ended["state"] as? String, "ended")

        // The workout record is published on the bus; wait until the store has it, then stop.
        var shown: [String: Any] = [:]
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let show = try await healthgate.run(["workout", "show", workoutID, "--db", database, "--format", "json"])
            if show.status == 0, let json = try JSONSerialization.jsonObject(with: Data(show.standardOutput.utf8)) as? [String: Any] {
                shown = json
                break
            }
            XCTAssertTrue(ContinuousClock.now < deadline, "the workout never reached the store: \(show.standardError)")
            if ContinuousClock.now >= deadline { return }
        }
        try await daemon.terminate()

        let list = try await healthgate.run(["workout", "list", "--db", database, "--format", "json"])
        XCTAssertEqual(list.status, 0, list.standardError)
        let listed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.standardOutput.utf8)) as? [[String: Any]])
        XCTAssertEqual(listed.compactMap { $0["id"] as? String }, [workoutID])

        // Running intervals from the events: start → pause, resume → end.
        let start = try Self.date(shown["startDate"])
        let end = try Self.date(shown["endDate"])
        let events = try XCTUnwrap(shown["events"] as? [[String: Any]])
        XCTAssertEqual(events.compactMap { $0["type"] as? String }, ["pause", "resume", "lap"])
        let pauseStart = try Self.date(events[0]["startDate"])
        let pauseEnd = try Self.date(events[1]["startDate"])
        let duration = try XCTUnwrap(shown["duration"] as? Double)
        XCTAssertEqual(duration, end.timeIntervalSince(start) - pauseEnd.timeIntervalSince(pauseStart), accuracy: 1e-3)
        func running(_ date: Date) -> Bool {
            (date >= start && date < pauseStart) || (date >= pauseEnd && date <= end)
        }

        XCTAssertNil(shown["sampleIDs"], "a stored workout refers to its time and devices, not to sample ids")
        // The heart rates the store reads back for the workout (as `workout chart` and `export`
        // draw it) were measured while running; every stored one measured while running (and
        // delivered before the end) is among them, the same reading with the same derived uuid.
        let reader = try HealthStore(path: database, access: .readOnly)
        let found = try await reader.workout(id: try XCTUnwrap(SampleID(string: workoutID)))
        let record = try XCTUnwrap(found)
        let collected = record.samples.filter { $0.type == .heartRate }
        XCTAssertFalse(collected.isEmpty)
        // `workout show --records` prints the workout with those records; without JSON it is refused.
        let withRecords = try await healthgate.run(["workout", "show", workoutID, "--db", database, "--format", "json", "--records"])
        XCTAssertEqual(withRecords.status, 0, withRecords.standardError)
        let printed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(withRecords.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual((printed["workout"] as? [String: Any])?["id"] as? String, workoutID)
        let printedSamples = try XCTUnwrap(printed["samples"] as? [[String: Any]])
        XCTAssertEqual(Set(printedSamples.compactMap { $0["uuid"] as? String }), Set(record.samples.map(\.id.uuidString)))
        XCTAssertEqual((printed["heartbeatSeries"] as? [Any])?.count, record.heartbeatSeries.count)
        try await healthgate.assertRun(["workout", "show", workoutID, "--db", database, "--records"], exits: 64, saying: "--records needs --format json")
        for sample in collected {
            XCTAssertTrue(running(sample.endDate), "sample at \(sample.endDate) is outside the running intervals")
        }
        let collectedIDs = Set(collected.map(\.id.uuidString))
        let stored = try await Self.heartRateSamples(healthgate, database: database)
        // Its devices: those of its device list, else every one but those it left to others (the
        // demo's class straps, which their participants' workouts collect).
        func identities(_ key: MetadataKey) -> [String]? {
            guard case .string(let text) = record.workout.metadata[key] else { return nil }
            return text.split(separator: ",").map(String.init)
        }
        let taken = IdentitySelection(identities(.workoutDevices))
        let left = identities(.excludedDevices).map(IdentitySelection.init)
        let settled = stored.filter { sample in
            running(sample.end) && sample.end < end.addingTimeInterval(-1) && taken.matches(sample.device)
                && !(left?.matches(sample.device) ?? false)
        }
        XCTAssertFalse(settled.isEmpty)
        for sample in settled {
            XCTAssertTrue(collectedIDs.contains(sample.id), "sample at \(sample.end) was measured while running but is not the workout's")
        }
        XCTAssertTrue(stored.contains { $0.end > pauseStart && $0.end < pauseEnd }, "the daemon kept measuring during the pause")
        let linkedSamples = stored.filter { collectedIDs.contains($0.id) }
        XCTAssertEqual(linkedSamples.count, collected.count)

        // The totals are the statistics of exactly those samples.
        let statistics = try XCTUnwrap(shown["statistics"] as? [[String: Any]])
        let heartRate = try XCTUnwrap(statistics.first { $0["type"] as? String == "heartRate" })
        XCTAssertEqual(heartRate["sampleCount"] as? Int, linkedSamples.count)
        XCTAssertEqual(heartRate["minimum"] as? Double, linkedSamples.map(\.value).min())
        XCTAssertEqual(heartRate["maximum"] as? Double, linkedSamples.map(\.value).max())
        let average = try XCTUnwrap(heartRate["average"] as? Double)
        XCTAssertTrue((linkedSamples.map(\.value).min() ?? 0)...(linkedSamples.map(\.value).max() ?? 0) ~= average)
        let mostRecent = linkedSamples.max { $0.end < $1.end }
        XCTAssertEqual(heartRate["mostRecent"] as? Double, mostRecent?.value)

        let chart = healthgate.root.appendingPathComponent("workout.svg")
        let drawn = try await healthgate.run(["workout", "chart", workoutID, "--db", database, "--output", chart.path])
        XCTAssertEqual(drawn.status, 0, drawn.standardError)
        let svg = try String(contentsOf: chart, encoding: .utf8)
        XCTAssertTrue(svg.hasPrefix("<?xml") || svg.hasPrefix("<svg"), String(svg.prefix(80)))
    }

    func testAGatewayRestartResumesTheWorkoutInsteadOfLosingOrEndingIt() async throws {
        let healthgate = try HealthgateExecutable()
        let demo = try await healthgate.startDemo(store: "restart.sqlite")
        let database = demo.database
        var daemon = demo.daemon
        let started = try await Self.snapshot(healthgate, ["workout", "start", "--activity", "cycling", "--format", "json"])
        let workoutID = try XCTUnwrap(started["workoutID"] as? String)
        try await Self.waitForHeartRateSamples(healthgate, database: database, atLeast: 2)
        _ = try await Self.snapshot(healthgate, ["workout", "pause", "--format", "json"])

        // Stop the gateway in the middle of the workout, then start it again.
        try await daemon.terminate()
        daemon = try healthgate.start(["demo", "--db", database, "--quiet"])
        try await healthgate.waitForControlSocket("the control socket after the restart")
        let restored = try await Self.snapshot(healthgate, ["workout", "status", "--format", "json"])
        XCTAssertEqual(restored["state"] as? String, "paused", "a paused workout comes back paused")
        XCTAssertEqual(restored["workoutID"] as? String, workoutID)

        _ = try await Self.snapshot(healthgate, ["workout", "resume", "--format", "json"])
        let before = try await Self.heartRateSamples(healthgate, database: database).count
        try await Self.waitForHeartRateSamples(healthgate, database: database, atLeast: before + 2)
        let ended = try await Self.snapshot(healthgate, ["workout", "end", "--format", "json"])
        XCTAssertEqual(ended["state"] as? String, "ended")
        let deadline = ContinuousClock.now + .seconds(30)
        var show = try await healthgate.run(["workout", "show", workoutID, "--db", database, "--format", "json"])
        while show.status != 0, ContinuousClock.now < deadline {
            show = try await healthgate.run(["workout", "show", workoutID, "--db", database, "--format", "json"])
        }
        XCTAssertEqual(show.status, 0, show.standardError)
        let workout = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(show.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual(workout["activityType"] as? String, "cycling")
        let events = try XCTUnwrap(workout["events"] as? [[String: Any]])
        XCTAssertEqual(events.compactMap { $0["type"] as? String }.prefix(2), ["pause", "resume"])
        try await daemon.terminate()
    }

    struct StoredHeartRate {
        var id: String
        var end: Date
        var value: Double
        var device: Device?
    }

    /// The demo's own heart-rate monitor, which the gateway's workout collects (the class's
    /// straps are their participants'): waiting for its readings makes each stretch of the
    /// workout hold some.
    static let ownMonitor = "demo-heart-rate"

    /// The stored heart rates, of every source or of `source` alone.
    static func heartRateSamples(
        _ healthgate: HealthgateExecutable, database: String, source: String? = nil
    ) async throws -> [StoredHeartRate] {
        let query = try await healthgate.run(
            ["query", "samples", "--type", "heartRate", "--db", database, "--format", "json", "--limit", "100000"]
                + (source.map { ["--source", $0] } ?? []))
        guard query.status == 0 else { return [] }
        let samples = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(query.standardOutput.utf8)) as? [[String: Any]])
        return try samples.map { sample in
            StoredHeartRate(
                id: try XCTUnwrap(sample["uuid"] as? String), end: try date(sample["end"]),
                value: try XCTUnwrap(sample["value"] as? Double),
                device: try sample["device"].map { device in
                    try HealthJSON.makeDecoder().decode(Device.self, from: try JSONSerialization.data(withJSONObject: device))
                })
        }
    }

    static func waitForHeartRateSamples(
        _ healthgate: HealthgateExecutable, database: String, source: String? = nil, atLeast count: Int
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while try await heartRateSamples(healthgate, database: database, source: source).count < count {
            guard ContinuousClock.now < deadline else { throw WaitTimeout(what: "\(count) heart-rate samples in the store") }
        }
    }

    static func snapshot(_ healthgate: HealthgateExecutable, _ arguments: [String]) async throws -> [String: Any] {
        let result = try await healthgate.run(arguments)
        XCTAssertEqual(result.status, 0, "\(arguments): \(result.standardError)")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    static func date(_ value: Any?) throws -> Date {
        try XCTUnwrap((value as? String).flatMap(RFC3339.date(from:)), "not a date: \(String(describing: value))")
    }
}
