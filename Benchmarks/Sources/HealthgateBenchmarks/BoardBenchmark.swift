import Foundation
import HealthModel
import GatewayRuntime
import Synchronization
import WebBoard
import Workouts
import WorkoutRuntime
import WorkoutPresentation

/// The live board with a class of 30 participants at 1 Hz, an hour into their group workout.
///
/// Measured (CPU of the whole process over the window, getrusage): 30 paced tasks, one per
/// participant, each making one heart-rate sample a second and handing it to what the gateway's
/// sinks do with it (every participant's workout controller offered the sample, the board's
/// model fed), while the board's server encodes a snapshot twice a second (every workout's
/// status and every tile) and sends it to two event-stream readers (`curl -N`, separate
/// processes, so their cost is not counted). Before the window each workout is given an hour of
/// samples (a clock shifted an hour back while they are fed), so the status of each workout is
/// computed over an hour of readings, as at the end of a class.
///
/// Baseline (same run, same process): the 30 paced tasks making their samples and nothing else.
enum BoardBenchmark {
    static let participants = 30

    /// A clock that can be shifted, so the workouts can be an hour old before the window.
    final class ShiftedClock: GatewayClock {
        let offset = Mutex<Double>(0)
        func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }
        func uptime() -> Duration { SystemClock().uptime() + .seconds(offset.withLock { $0 }) }
        func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
    }

    static func run(seconds: Double, report: inout Report) async throws {
        report.section("Live board: \(participants) participants at 1 Hz")
        let environment = try BenchmarkEnvironment(name: "board")
        defer { environment.removeAll() }
        let clock = ShiftedClock()
        let devices = (0..<participants).map { Device(name: "Strap \($0)", localIdentifier: "bench-strap-\($0)") }
        let roster = ParticipantRoster(
            participants: devices.enumerated().map { index, device in
                Participant(
                    name: "P\(index)", devices: [device.localIdentifier ?? ""],
                    profile: UserProfile(maximumHeartRate: 180, dateOfBirth: "1990-01-01", weightKilograms: 70, biologicalSex: .male))
            },
            defaultProfile: UserProfile(maximumHeartRate: 190))
        let logSink = CountingLogSink()
        let logger = Logger(label: "board-benchmark", sink: logSink, level: .warning)
        let ids = SampleIDGenerator()
        let workouts = ParticipantWorkouts(roster: roster, store: VolatileWorkoutStore(), clock: clock, ids: ids, logger: logger)
        let controllers = roster.participants.compactMap { workouts.controller(for: $0.name) }
        let board = LiveBoard(workouts: workouts, clock: clock)

        // An hour of class before the window.
        let hour = 3600.0
        clock.offset.withLock { $0 = -hour - 1 }
        _ = try await workouts.handle(.start(activity: .highIntensityIntervalTraining), for: .all)
        let start = Date().addingTimeInterval(-hour)
        for second in 0..<Int(hour) {
            let batch = try devices.enumerated().map { index, device in
                try sample(ids: ids, bpm: heartRate(participant: index, second: second), at: start.addingTimeInterval(Double(second)), device: device)
            }
            for controller in controllers { controller.ingest(batch) }
        }
        clock.offset.withLock { $0 = 0 }

        // Baseline: the pacing alone.
        let (baselineShare, baselineTicks) = try await cpuShare(seconds: seconds) { index, second in
            blackHole(try sample(ids: ids, bpm: heartRate(participant: index, second: second), at: Date(), device: devices[index]))
        }

        // Measured: the board's path.
        let server = BoardServer(
            configuration: WebBoardConfiguration(listen: try ListenAddress(parsing: "127.0.0.1:0")), token: nil, board: board,
            history: nil, logger: logger)
        let port = try server.start()
        let streams = (0..<2).map { environment.path("events-\($0).txt") }
        let readers = try streams.map { try reader(port: port, output: $0) }
        let publisher = Task { try await server.publishUpdates(from: board, every: .milliseconds(500), clock: clock) }
        let (measuredShare, measuredTicks) = try await cpuShare(seconds: seconds) { index, second in
            let batch = [try sample(ids: ids, bpm: heartRate(participant: index, second: second), at: Date(), device: devices[index])]
            workouts.main.ingest(batch)
            for controller in controllers { controller.ingest(batch) }
            board.ingest(batch)
        }
        publisher.cancel()
        await server.stop()
        for reader in readers {
            reader.terminate()
            reader.waitUntilExit()
        }
        let tiles = board.snapshot().tiles
        let encoded = try HealthJSON.makeEncoder().encode(board.snapshot()).count
        report.line(
            "Measured: \(participants) paced tasks (1 Hz each) → every workout controller offered each sample, the board's model fed; "
                + "the server encodes the board twice a second and sends it to 2 event-stream readers (curl, other processes). "
                + "Each workout holds an hour of samples before the window (\(Int(hour)) per participant). "
                + "Baseline: the paced tasks making their samples only. \(Int(seconds)) s each, CPU = getrusage delta / wall time.")
        report.line("")
        report.table(
            ["tiles", "snapshot size", "baseline CPU", "measured CPU", "ratio", "board's own share"],
            [[String(tiles.count), "\(encoded / 1024) KiB",
              String(format: "%.2f %%", baselineShare * 100), String(format: "%.2f %%", measuredShare * 100),
              String(format: "%.1f×", measuredShare / max(baselineShare, 0.0001)),
              String(format: "%.2f %%", (measuredShare - baselineShare) * 100)]])
        let problems = logSink.summary
        report.line("Warnings and errors logged during the run: \(problems.warnings) / \(problems.errors)"
            + (problems.last.map { " (last: \($0))" } ?? "") + ".")
        let asked = Double(participants) * seconds
        report.load("samples made by the paced tasks, baseline", asked: asked, got: Double(baselineTicks))
        report.load("samples fed to the board", asked: asked, got: Double(measuredTicks))
        for (index, stream) in streams.enumerated() {
            // Two snapshots a second; the reader connects while the window starts.
            report.load("snapshots received by reader \(index + 1)", asked: 2 * seconds, got: Double(events(in: stream)), share: 0.9)
        }
        report.line(
            String(format: "Budget: the board's path with %d participants ≤ 5 %% of one core: %.2f %%, ", participants, measuredShare * 100)
                + report.verdict(measuredShare <= 0.05) + ".")
    }

    static func heartRate(participant: Int, second: Int) -> Double {
        100 + 40 * sin(Double(second + 37 * participant) / 60)
    }

    static func sample(ids: SampleIDGenerator, bpm: Double, at date: Date, device: Device) throws -> HealthRecord {
        .quantity(try QuantitySample(
            id: ids.next(), type: .heartRate, quantity: Quantity(bpm.rounded(), .countPerMinute), start: date, end: date,
            device: device))
    }

    /// Runs `tick` for each of the participants once a second, each on its own task, for
    /// `seconds`; returns the process's CPU time over wall time and how many ticks ran.
    static func cpuShare(
        seconds: Double, tick: @escaping @Sendable (Int, Int) throws -> Void
    ) async throws -> (share: Double, ticks: Int) {
        let cpu0 = Harness.cpuSeconds()
        let start = ContinuousClock.now
        let ticks = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<participants {
                group.addTask {
                    // Spread over the second, as straps tick on their own crystals.
                    var due = start + .milliseconds(index * 1000 / participants)
                    var second = 0
                    while due < start + .milliseconds(Int64(seconds * 1000)) {
                        try await Task.sleep(until: due, clock: .continuous)
                        try tick(index, second)
                        second += 1
                        due += .seconds(1)
                    }
                    return second
                }
            }
            return try await group.reduce(0, +)
        }
        return ((Harness.cpuSeconds() - cpu0) / (ContinuousClock.now - start).benchmarkSeconds, ticks)
    }

    /// An event-stream reader in another process, writing what it receives to `output`.
    static func reader(port: UInt16, output: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-sN", "-o", output, "http://127.0.0.1:\(port)/events"]
        try process.run()
        return process
    }

    /// The events in a saved event stream: its `data:` lines (one per event; BoardServer sends
    /// each snapshot as one line).
    static func events(in file: String) -> Int {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.hasPrefix("data:") }.count
    }
}
