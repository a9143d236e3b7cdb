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
}
