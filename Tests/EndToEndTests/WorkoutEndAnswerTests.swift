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
