import Foundation
import GatewayTesting
import XCTest

/// A command that changes the daemon's workouts answers once the change is done: `workout end`
/// returns when the finished workout is in the store, so a `workout list` right after shows it.
final class WorkoutEndAnswerTests: XCTestCase {
    func testWorkoutEndThenAtOnceWorkoutListShowsTheWorkout() async throws {
        let healthgate = try HealthgateExecutable()
        let (daemon, database) = try await healthgate.startDemo(store: "end.sqlite")
        for round in 1...3 {
            let start = try await healthgate.run(["workout", "start", "--activity", "running", "--format", "json"])
            XCTAssertEqual(start.status, 0, start.standardError)
            let started = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(start.standardOutput.utf8)) as? [String: Any])
            let id = try XCTUnwrap(started["workoutID"] as? String)
            let end = try await healthgate.run(["workout", "end"])
            XCTAssertEqual(end.status, 0, end.standardError)
            XCTAssertTrue(end.standardOutput.hasPrefix("ended"), end.standardOutput)

            let list = try await healthgate.run(["workout", "list", "--db", database, "--format", "json"])
            XCTAssertEqual(list.status, 0, list.standardError)
            let listed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.standardOutput.utf8)) as? [[String: Any]])
            XCTAssertTrue(listed.contains { $0["id"] as? String == id }, "round \(round): \(id) not listed right after the end")
            XCTAssertEqual(listed.count, round)
        }
        try await daemon.terminate()
    }
}

/// A store whose writer is slower than the end's wait (a slow SD card's fsyncs, a starved
/// processor): here the store's batch window, 8 s, so the ended workout is committed about 8 s
/// after it reaches the store's sink, with no other record flowing to commit it sooner. `workout
/// end` must not answer "stored" before the store holds the workout: it exits 75 and says the end
/// is journaled and the workout not stored yet ("stored": false), and the workout is in the store
/// a few seconds later. With `--all`, every participant's workout waits under one deadline, so the
/// daemon answers (75, each one named) before the CLI's own 10 s run out.
final class WorkoutEndOnASlowStoreTests: XCTestCase {
    /// A daemon with no source and a store that commits `batchWindow` s after a record arrives;
    /// `storeWait` is its `storeWaitSeconds` (absent: the default, 5).
    func startSlowStore(
        _ healthgate: HealthgateExecutable, participants: [String] = [], batchWindow: Double = 8, storeWait: Double? = nil
    ) async throws -> (daemon: HealthgateExecutable.RunningProcess, database: String) {
        let database = healthgate.root.appendingPathComponent("slow.sqlite").path
        let configuration = healthgate.root.appendingPathComponent("slow.json")
        // Each wears a strap that is not there: their workouts end with no samples.
        let people = participants.enumerated().map { index, name in
            #"{"name": "\#(name)", "devices": ["02:00:00:00:01:0\#(index)"]}"#
        }.joined(separator: ", ")
        try Data(#"""
            {"store": {"path": "\#(database)"}, "participants": [\#(people)],\#(storeWait.map { #" "storeWaitSeconds": \#($0),"# } ?? "")
             "sinks": [{"kind": "sqlite", "name": "store", "config": {"batchWindowSeconds": \#(batchWindow)}}]}
            """#.utf8).write(to: configuration)
        let daemon = try healthgate.start(["run", "--config", configuration.path])
        try await healthgate.waitForControlSocket()
        return (daemon, database)
    }

    static func listed(_ healthgate: HealthgateExecutable, _ database: String) async throws -> [String] {
        let list = try await healthgate.run(["workout", "list", "--db", database, "--format", "json"])
        XCTAssertEqual(list.status, 0, list.standardError)
        let workouts = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.standardOutput.utf8)) as? [[String: Any]])
        return workouts.compactMap { $0["id"] as? String }
    }

    func testAnEndTheStoreHasNotCommittedWithinItsWaitExits75AndTheWorkoutIsStoredLater() async throws {
        let healthgate = try HealthgateExecutable()
        let (daemon, database) = try await startSlowStore(healthgate)
        let start = try await healthgate.run(["workout", "start", "--activity", "running", "--format", "json"])
        XCTAssertEqual(start.status, 0, start.standardError)
        let started = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(start.standardOutput.utf8)) as? [String: Any])
        let id = try XCTUnwrap(started["workoutID"] as? String)

        let end = try await healthgate.run(["workout", "end", "--format", "json"])
        XCTAssertEqual(end.status, 75, "answered as stored before the store held it: \(end.standardOutput) \(end.standardError)")
        let answer = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(end.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual(answer["state"] as? String, "ended")
        XCTAssertEqual(answer["stored"] as? Bool, false)
        let waited = try XCTUnwrap(answer["storeWaitSeconds"] as? Double)
        XCTAssertTrue((4...5).contains(waited), "the default storeWaitSeconds, 5, less the end's own work: \(waited)")
        XCTAssertTrue(end.standardError.contains("the workout \(id) ended and its end is journaled, but it is not stored yet"), end.standardError)
        XCTAssertTrue(end.standardError.contains("the daemon waited \(String(format: "%.1f", waited)) s for the store"), end.standardError)
        let listedAtTheAnswer = try await Self.listed(healthgate, database)
        XCTAssertFalse(listedAtTheAnswer.contains(id), "the answer said not stored, and it was not")

        try await waitUntil(timeout: .seconds(30), "the workout stored by the store's next commit") {
            try await Self.listed(healthgate, database).contains(id)
        }
        try await daemon.terminate()
    }

    /// `storeWaitSeconds` is the daemon's wait: longer than the store's 6 s window, the same end
    /// answers "stored" (0), and the store holds the workout at the answer.
    func testStoreWaitSecondsIsTheDaemonsWaitForTheStore() async throws {
        let healthgate = try HealthgateExecutable()
        let (daemon, database) = try await startSlowStore(healthgate, batchWindow: 6, storeWait: 12)
        let start = try await healthgate.run(["workout", "start", "--activity", "running", "--format", "json"])
        XCTAssertEqual(start.status, 0, start.standardError)
        let started = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(start.standardOutput.utf8)) as? [String: Any])
        let id = try XCTUnwrap(started["workoutID"] as? String)
        let end = try await healthgate.run(["workout", "end", "--format", "json", "--timeout", "20"])
        XCTAssertEqual(end.status, 0, "\(end.standardOutput) \(end.standardError)")
        let answer = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(end.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual(answer["stored"] as? Bool, true)
        XCTAssertNil(answer["storeWaitSeconds"])
        let listed = try await Self.listed(healthgate, database)
        XCTAssertTrue(listed.contains(id), "answered stored: the store holds it")
        try await daemon.terminate()
    }

    func testAClassEndWaitsForEveryWorkoutUnderOneDeadlineAndNamesThoseNotStored() async throws {
        let healthgate = try HealthgateExecutable()
        let (daemon, database) = try await startSlowStore(healthgate, participants: ["Ana", "Ben", "Cleo"])
        let start = try await healthgate.run(["workout", "start", "--all", "--activity", "running"])
        XCTAssertEqual(start.status, 0, start.standardError)

        let end = try await healthgate.run(["workout", "end", "--all", "--format", "json"])
        // Three waits of 5 s one after another would outlast the CLI's 10 s ("did not answer").
        XCTAssertEqual(end.status, 75, "\(end.standardOutput) \(end.standardError)")
        XCTAssertFalse(end.standardError.contains("did not answer"), end.standardError)
        let answer = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(end.standardOutput.utf8)) as? [String: Any])
        let workouts = try XCTUnwrap(answer["workouts"] as? [[String: Any]])
        XCTAssertEqual(workouts.compactMap { $0["participant"] as? String }, ["Ana", "Ben", "Cleo"])
        XCTAssertEqual(workouts.compactMap { $0["stored"] as? Bool }, [false, false, false])
        for name in ["Ana", "Ben", "Cleo"] {
            XCTAssertTrue(end.standardError.contains("\(name)'s workout"), end.standardError)
        }
        let ids = workouts.compactMap { $0["workoutID"] as? String }
        try await waitUntil(timeout: .seconds(30), "the class's workouts stored by the store's next commit") {
            Set(try await Self.listed(healthgate, database)).isSuperset(of: ids)
        }
        try await daemon.terminate()
    }

    /// The CLI's wait for the daemon's answer is the user's (`--timeout`): shorter than the
    /// daemon's wait for a slow store, it gives up first and says which wait ran out and how long
    /// it was (75: the daemon may still carry the command out); a wrong value is a usage error.
    func testTheCLIsWaitForAnAnswerIsTimeoutAndAWaitThatRunsOutSaysSo() async throws {
        let healthgate = try HealthgateExecutable()
        let (daemon, database) = try await startSlowStore(healthgate)
        for wrong in ["0", "-1", "soon", "3601"] {
            let refused = try await healthgate.run(["workout", "end", "--timeout", wrong])
            XCTAssertEqual(refused.status, 64, refused.standardError)
            XCTAssertTrue(refused.standardError.contains("--timeout"), refused.standardError)
        }
        let start = try await healthgate.run(["workout", "start", "--activity", "running", "--timeout", "30"])
        XCTAssertEqual(start.status, 0, start.standardError)
        let end = try await healthgate.run(["workout", "end", "--timeout", "1.5"])
        XCTAssertEqual(end.status, 75, end.standardError)
        XCTAssertTrue(end.standardError.contains("took 'workout.end' but did not answer within 1.5 s (--timeout)"), end.standardError)
        // It carried the end out all the same.
        try await waitUntil(timeout: .seconds(30), "the ended workout stored") {
            try await !Self.listed(healthgate, database).isEmpty
        }
        try await daemon.terminate()
    }
}
