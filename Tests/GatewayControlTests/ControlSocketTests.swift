import Foundation
import GatewayControl
import GatewayTesting
import HealthModel
import GatewayRuntime
import Workouts
import WorkoutRuntime
import WorkoutsTesting
import XCTest

/// The workout commands through the real control socket server and client (one JSON request
/// and response per line on a Unix socket), as `healthgate workout …` talks to the daemon.
final class ControlSocketTests: XCTestCase {
    func testWorkoutCommandsOverTheControlSocket() async throws {
        let directory = try TestEnvironment.temporaryDirectory("workouts-socket")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        let s = Script(clock: clock)
        let logger = Logger(label: "test", sink: RecordingLogSink())
        let controller = WorkoutController(
            profile: scriptedProfile, store: VolatileWorkoutStore(), clock: clock, ids: SampleIDGenerator(seed: 3),
            logger: logger)
        let path = directory.appendingPathComponent("control.sock").path
        let server = ControlServer(path: path, handlers: controller.controlHandlers(), logger: logger)
        try await server.start()
        defer { server.stop() }
        let client = ControlClient(path: path)

        func send(_ command: String, _ arguments: JSONValue = .object([:])) async throws -> ControlResponse {
            try await client.send(ControlRequest(command: command, arguments: arguments))
        }

        var response = try await send("workout.start", .object(["activity": .string("running")]))
        XCTAssertTrue(response.ok, response.error ?? "")
        controller.ingest([s.heartRate(150, at: 0)])
        clock.advance(by: .seconds(5))
        response = try await send("workout.status")
        let status = try XCTUnwrap(response.result).decode(WorkoutSnapshot.self)
        XCTAssertEqual(status.state, .running)
        XCTAssertEqual(status.elapsedSeconds, 5)
        XCTAssertEqual(status.heartRate.current, 150)
        XCTAssertEqual(status.zone, 3)

        // A refused command comes back as a clear error, not a crash.
        response = try await send("workout.start", .object(["activity": .string("running")]))
        XCTAssertFalse(response.ok)
        XCTAssertTrue(response.error?.contains("already running") ?? false, response.error ?? "")
        response = try await send("workout.start", .object([:]))
        XCTAssertFalse(response.ok)

        response = try await send("workout.end")
        XCTAssertEqual(try XCTUnwrap(response.result).decode(WorkoutSnapshot.self).state, .ended)
        response = try await send("workout.pause")
        XCTAssertFalse(response.ok)
        XCTAssertTrue(response.error?.contains("no workout is in progress") ?? false, response.error ?? "")
    }

    /// A daemon that took a request and is still at it is not a missing daemon: the client's
    /// error says which, so that the CLI does not say it cannot reach a daemon that may still
    /// carry the command out (`workout end --all` of a class on a slow host).
    func testARequestTakenButNotAnsweredInTimeIsNotAMissingDaemon() async throws {
        let directory = try TestEnvironment.temporaryDirectory("control-unanswered")
        defer { try? FileManager.default.removeItem(at: directory) }
        let logger = Logger(label: "test", sink: RecordingLogSink())
        let path = directory.appendingPathComponent("control.sock").path
        let slow: @Sendable (JSONValue) async throws -> JSONValue = { _ in
            try await Task.sleep(for: .seconds(2))
            return .object([:])
        }
        let server = ControlServer(path: path, handlers: ["slow": slow], logger: logger)
        try await server.start()
        defer { server.stop() }
        do {
            _ = try await ControlClient(path: path, timeout: .milliseconds(300)).send(ControlRequest(command: "slow", arguments: .object([:])))
            XCTFail("answered")
        } catch let error as ControlSocketError {
            XCTAssertTrue(error.meansUnanswered, "\(error)")
            XCTAssertFalse(error.meansNoDaemon, "\(error)")
        }
        do {
            _ = try await ControlClient(path: path + ".none").send(ControlRequest(command: "slow", arguments: .object([:])))
            XCTFail("answered")
        } catch let error as ControlSocketError {
            XCTAssertTrue(error.meansNoDaemon, "\(error)")
            XCTAssertFalse(error.meansUnanswered, "\(error)")
        }
    }
}
