import Foundation
import GatewayControl
import GatewayTesting
import HealthModel
import GatewayRuntime
import Workouts
import WorkoutRuntime
import WorkoutsTesting
import XCTest

/// `healthgate workout …` as a user runs it: the built executable talking over the real control
/// socket to a workout controller served in this process (what `healthgate run` serves).
final class WorkoutCommandLineTests: XCTestCase {
    func testWorkoutCommandsAgainstAServedController() async throws {
        let healthgate = try HealthgateExecutable()
        defer { try? FileManager.default.removeItem(at: healthgate.root) }
        let clock = ManualClock()
        let s = Script(clock: clock)
        let logger = Logger(label: "test", sink: RecordingLogSink())
        let controller = WorkoutController(
            profile: scriptedProfile, store: VolatileWorkoutStore(), clock: clock,
            ids: SampleIDGenerator(seed: 11), logger: logger)
        try FileManager.default.createDirectory(
            at: healthgate.controlSocket.deletingLastPathComponent(), withIntermediateDirectories: true)
        let server = ControlServer(path: healthgate.controlSocket.path, handlers: controller.controlHandlers(), logger: logger)
        try await server.start()
        defer { server.stop() }

        let idle = try await healthgate.run(["workout", "status"])
        XCTAssertEqual(idle.status, 0, idle.standardError)
        XCTAssertTrue(idle.standardOutput.contains("[notStarted]"), idle.standardOutput)

        try await healthgate.assertRun(["workout", "start"], exits: 64, saying: "--activity is required")

        let started = try await healthgate.run(["workout", "start", "--activity", "running", "--devices", "AA:BB:CC:DD:EE:FF"])
        XCTAssertEqual(started.status, 0, started.standardError)
        XCTAssertTrue(started.standardOutput.hasPrefix("running  0:00  hr -"), started.standardOutput)

        controller.ingest([s.heartRate(150, at: 64), s.heartRate(99, at: 64, device: Script.other)])
        s.move(to: 65)
        // Not a terminal (a pipe): one plain line per update, no escape sequences.
        let live = try await healthgate.run(["workout", "live", "--count", "2"])
        XCTAssertEqual(live.status, 0, live.standardError)
        let lines = live.standardOutput.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, live.standardOutput)
        for line in lines {
            XCTAssertTrue(line.contains(" running  1:05  hr 150  avg 150  max 150  zone 3"), String(line))
        }
        XCTAssertFalse(live.standardOutput.contains("\u{1B}["))

        // On a terminal (script(1) gives it a pseudo-terminal): the view redraws in place.
        let terminal = try await runOnTerminal(healthgate, "workout live --count 1")
        XCTAssertTrue(terminal.contains("\u{1B}[H\u{1B}[2J"), "clears the screen first: \(terminal.debugDescription)")
        XCTAssertTrue(terminal.contains("\u{1B}[K"), "clears each line's rest")
        XCTAssertTrue(terminal.contains("heart rate  150 bpm   zone 3"), terminal.debugDescription)

        try await healthgate.assertRun(["workout", "start", "--activity", "cycling"], exits: 65, saying: "already running")

        let lap = try await healthgate.run(["workout", "lap", "--format", "json"])
        XCTAssertEqual(try HealthJSON.makeDecoder().decode(WorkoutSnapshot.self, from: Data(lap.standardOutput.utf8)).laps, 1)

        let ended = try await healthgate.run(["workout", "end", "--format", "json"])
        XCTAssertEqual(ended.status, 0, ended.standardError)
        let final = try HealthJSON.makeDecoder().decode(WorkoutSnapshot.self, from: Data(ended.standardOutput.utf8))
        XCTAssertEqual(final.state, .ended)
        XCTAssertEqual(final.elapsedSeconds, 65)
        XCTAssertEqual(controller.pendingWorkouts.first?.statistics(for: .heartRate)?.sampleCount, 1, "only the chosen strap")

        // After the end, live shows the final state once and returns.
        let after = try await healthgate.run(["workout", "live"])
        XCTAssertEqual(after.status, 0)
        XCTAssertEqual(after.standardOutput.split(separator: "\n").count, 1)
        XCTAssertTrue(after.standardOutput.contains(" ended  1:05"), after.standardOutput)

        try await healthgate.assertRun(["workout", "pause"], exits: 65, saying: "no workout is in progress")
    }

    /// Ending a class (issue #48): `--all` acts on every workout in progress; a participant
    /// without one is listed, in text and JSON, and is no failure; with none in progress at all
    /// it fails as the single form does.
    func testEndingAllEndsTheWorkoutsInProgressAndListsTheOthers() async throws {
        let healthgate = try HealthgateExecutable()
        defer { try? FileManager.default.removeItem(at: healthgate.root) }
        let logger = Logger(label: "test", sink: RecordingLogSink())
        let roster = try ParticipantRoster.decode(
            .array(["Ana", "Ben", "Cleo"].map { .object(["name": .string($0), "devices": .array([.string("strap-\($0)")])]) }),
            defaultProfile: scriptedProfile)
        let group = ParticipantWorkouts(
            roster: roster, store: VolatileWorkoutStore(), clock: ManualClock(), ids: SampleIDGenerator(seed: 12), logger: logger)
        try FileManager.default.createDirectory(
            at: healthgate.controlSocket.deletingLastPathComponent(), withIntermediateDirectories: true)
        let server = ControlServer(path: healthgate.controlSocket.path, handlers: group.controlHandlers(), logger: logger)
        try await server.start()
        defer { server.stop() }

        for name in ["Ana", "Ben"] {
            let started = try await healthgate.run(["workout", "start", "--activity", "rowing", "--participant", name])
            XCTAssertEqual(started.status, 0, started.standardError)
        }
        // Ben hands his strap on and leaves; Cleo never started.
        let ben = try await healthgate.run(["workout", "end", "--participant", "Ben"])
        XCTAssertEqual(ben.status, 0, ben.standardError)

        let lap = try await healthgate.run(["workout", "lap", "--all", "--format", "json"])
        XCTAssertEqual(lap.status, 0, lap.standardError)
        let answer = try HealthJSON.makeDecoder().decode(ParticipantWorkouts.GroupAnswer.self, from: Data(lap.standardOutput.utf8))
        XCTAssertEqual(answer.workouts.map(\.participant), ["Ana"])
        XCTAssertEqual(answer.workouts.first?.laps, 1)
        XCTAssertEqual(answer.notInProgress, ["Ben", "Cleo"])
        XCTAssertTrue(lap.standardOutput.contains(#""notInProgress""#), lap.standardOutput)

        let ended = try await healthgate.run(["workout", "end", "--all"])
        XCTAssertEqual(ended.status, 0, ended.standardError)
        XCTAssertEqual(ended.standardError, "")
        let lines = ended.standardOutput.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, ended.standardOutput)
        XCTAssertTrue(lines[0].hasPrefix("Ana: ended"), ended.standardOutput)
        XCTAssertEqual(Array(lines.dropFirst()), ["Ben: no workout in progress", "Cleo: no workout in progress"])

        let again = try await healthgate.run(["workout", "end", "--all"])
        XCTAssertEqual(again.status, 65, again.standardOutput)
        XCTAssertTrue(
            again.standardError.contains("no participant's workout is in progress (participants: Ana, Ben, Cleo)"), again.standardError)
        let help = try await healthgate.run(["workout", "end", "--help"])
        XCTAssertTrue(help.standardOutput.contains("no workout in progress"), help.standardOutput)
    }

    /// Runs `healthgate ARGUMENTS` on a pseudo-terminal with script(1) (util-linux) and returns
    /// what it wrote there.
    func runOnTerminal(_ healthgate: HealthgateExecutable, _ arguments: String) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", "\(healthgate.url.path) \(arguments)", "/dev/null"]
        process.environment = healthgate.environment
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        let finished = AsyncStream<Void> { continuation in
            process.terminationHandler = { _ in continuation.finish() }
        }
        try process.run()
        for await _ in finished {}
        XCTAssertEqual(process.terminationStatus, 0)
        return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}
