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
/// Two measured phases in the same run, each with its CPU share (getrusage over the window) and
/// each reading's delay from the board's sink to a client's event:
/// - **tick** (the board before): a replica of the former feed (every workout re-analysed over
///   all its samples at most once a second) published whole every 500 ms;
/// - **events** (the board now): ``LiveBoard`` (running aggregates) with
///   ``BoardServer/publishChanges(from:)`` (an event per change, coalesced over 50 ms,
///   only the changed tiles).
///
/// In both, 30 paced tasks, one per participant, make one heart-rate sample a second and hand it
/// to what the gateway's sinks do with it (every participant's workout controller offered it,
/// the board fed); two `curl -N` readers in other processes take the stream (their cost is not
/// counted), and a third one's output is read here, line by line, to time the events. A
/// reading's delay: from the moment it is handed to the board to the moment the first event
/// showing it (its tile's heart rate) is read from that pipe. Before the window each workout
/// is given an hour of samples (a clock shifted an hour back while they are fed).
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

    /// The board as it was before running aggregates: the workouts' full analyses, refreshed at
    /// most once a second, with the tiles' model. Only for the comparison.
    final class FullAnalysisBoard: BoardFeed {
        let model = Mutex(LiveBoardModel())
        let cache = Mutex<(uptime: Duration, statuses: [String: WorkoutSnapshot])?>(nil)
        let workouts: ParticipantWorkouts
        let clock: any GatewayClock
        init(workouts: ParticipantWorkouts, clock: any GatewayClock) {
            self.workouts = workouts
            self.clock = clock
        }
        var roster: ParticipantRoster { workouts.roster }
        func setChangeHandler(_ handler: (@Sendable () -> Void)?) {}
        func signIn(strap: String, participant: String, keep: Bool) async throws(WorkoutError) -> Participant {
            let roster = try await workouts.assign(device: strap, to: participant, keep: keep)
            return roster.participant(named: participant) ?? Participant(name: participant)
        }
        func ingest(_ records: [HealthRecord]) {
            let now = clock.uptime()
            model.withLock { $0.ingest(records, arrivedAt: now) }
        }
        func snapshot() -> BoardSnapshot {
            let model = model.withLock { $0 }
            let uptime = clock.uptime()
            let statuses: [String: WorkoutSnapshot]
            if let cached = cache.withLock({ $0 }), (uptime - cached.uptime).benchmarkSeconds < 1 {
                statuses = cached.statuses
            } else {
                statuses = workouts.statuses()
                cache.withLock { $0 = (uptime, statuses) }
            }
            return model.snapshot(at: clock.now(), uptime: uptime, roster: workouts.roster, workouts: statuses)
        }
    }

    /// What one measured phase gave.
    struct Phase {
        var share: Double
        var ticks: Int
        var delays: [Double]
        var events: [Int]
        var bytes: Int
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

        // An hour of class before the window.
        let hour = 3600.0
        clock.offset.withLock { $0 = -hour - 1 }
        _ = try await workouts.handle(.start(activity: .highIntensityIntervalTraining), for: .all)
        let start = Date().addingTimeInterval(-hour)
        for second in 0..<Int(hour) {
            let batch = try devices.enumerated().map { index, device in
                try sample(ids: ids, bpm: heartRate(participant: index, second: second), at: start.addingTimeInterval(Double(second)), device: devices[index])
            }
            for controller in controllers { controller.ingest(batch) }
        }
        clock.offset.withLock { $0 = 0 }

        // Baseline: the pacing alone.
        let (baselineShare, baselineTicks) = try await cpuShare(seconds: seconds) { index, second in
            blackHole(try sample(ids: ids, bpm: heartRate(participant: index, second: second), at: Date(), device: devices[index]))
        }

        func measure(
            _ name: String, feed: any BoardFeed, ingest: @escaping @Sendable ([HealthRecord]) -> Void,
            publish: @escaping @Sendable (BoardServer) async throws -> Void
        ) async throws -> Phase {
            let server = BoardServer(
                configuration: WebBoardConfiguration(listen: try ListenAddress(parsing: "127.0.0.1:0")), token: nil, board: feed,
                history: nil, logger: logger)
            let port = try server.start()
            let streams = (0..<2).map { environment.path("\(name)-events-\($0).txt") }
            let readers = try streams.map { try reader(port: port, output: $0) }
            let timed = try TimedReader(port: port)
            let sent = Mutex(Array(repeating: [(bpm: Double, at: ContinuousClock.Instant)](), count: participants))
            let publisher = Task { try await publish(server) }
            let (share, ticks) = try await cpuShare(seconds: seconds) { index, second in
                let bpm = heartRate(participant: index, second: second).rounded()
                let batch = [try sample(ids: ids, bpm: bpm, at: Date(), device: devices[index])]
                workouts.main.ingest(batch)
                for controller in controllers { controller.ingest(batch) }
                sent.withLock { $0[index].append((bpm, ContinuousClock.now)) }
                ingest(batch)
            }
            publisher.cancel()
            await server.stop()
            for reader in readers {
                reader.terminate()
                reader.waitUntilExit()
            }
            let lines = timed.finish()
            let delays = Self.delays(lines: lines, sent: sent.withLock { $0 })
            return Phase(
                share: share, ticks: ticks, delays: delays, events: streams.map(events(in:)),
                bytes: lines.reduce(0) { $0 + $1.line.utf8.count })
        }

        let before = FullAnalysisBoard(workouts: workouts, clock: clock)
        let tick = try await measure("tick", feed: before, ingest: { before.ingest($0) }) { server in
            try await server.publishUpdates(from: before, every: .milliseconds(500), clock: clock)
        }
        let board = LiveBoard(workouts: workouts, clock: clock)
        let evented = try await measure("events", feed: board, ingest: { board.ingest($0) }) { server in
            try await server.publishChanges(from: board)
        }

        let tiles = board.snapshot().tiles
        let encoded = try HealthJSON.makeEncoder().encode(board.snapshot()).count
        report.line(
            "Measured: \(participants) paced tasks (1 Hz each) → every workout controller offered each sample, the board fed; "
                + "2 event-stream readers (curl, other processes) and a third whose events are timed here. "
                + "Each workout holds an hour of samples before the window (\(Int(hour)) per participant). "
                + "**tick**: the board before (full analyses at most once a second, the whole board every 500 ms); "
                + "**events**: LiveBoard's running aggregates, an event per change coalesced over "
                + "\(BoardUpdate.coalescingMilliseconds) ms, only the changed tiles. "
                + "Delay: a reading handed to the board → the first event showing it read by the timed reader. "
                + "Baseline: the paced tasks making their samples only. \(Int(seconds)) s each, CPU = getrusage delta / wall time.")
        report.line("")
        func row(_ name: String, _ phase: Phase) -> [String] {
            [name, String(format: "%.0f ms", (phase.delays.quantile(0.5) ?? .nan) * 1000),
             String(format: "%.0f ms", (phase.delays.quantile(0.99) ?? .nan) * 1000),
             String(format: "%.0f ms", (phase.delays.max() ?? .nan) * 1000),
             String(format: "%.2f %%", phase.share * 100), String(format: "%.2f %%", (phase.share - baselineShare) * 100),
             String(phase.events.first ?? 0), String(format: "%.1f KiB/s", Double(phase.bytes) / 1024 / seconds)]
        }
        report.table(
            ["publisher", "delay p50", "delay p99", "delay max", "CPU", "board's own share", "events per reader", "bytes to a reader"],
            [row("tick (before)", tick), row("events (now)", evented)])
        report.line(String(format: "Tiles: %d; the whole board is %d KiB. Baseline CPU %.2f %%.", tiles.count, encoded / 1024, baselineShare * 100))
        let problems = logSink.summary
        report.line("Warnings and errors logged during the run: \(problems.warnings) / \(problems.errors)"
            + (problems.last.map { " (last: \($0))" } ?? "") + ".")
        let asked = Double(participants) * seconds
        report.load("samples made by the paced tasks, baseline", asked: asked, got: Double(baselineTicks))
        for (name, phase) in [("tick", tick), ("events", evented)] {
            report.load("samples fed to the board, \(name)", asked: asked, got: Double(phase.ticks))
            report.load("readings seen in an event by the timed reader, \(name)", asked: Double(phase.ticks), got: Double(phase.delays.count), share: 0.9)
        }
        report.load("snapshots received by each curl reader, tick", asked: 2 * seconds, got: Double(tick.events.min() ?? 0), share: 0.9)
        let p50 = evented.delays.quantile(0.5) ?? .infinity, p99 = evented.delays.quantile(0.99) ?? .infinity
        report.line(
            String(format: "Budget: the board's path with %d participants ≤ 5 %% of one core: %.2f %%, ", participants, evented.share * 100)
                + report.verdict(evented.share <= 0.05) + String(format: "; a reading to a client p50 ≤ 300 ms, p99 ≤ 1 s: %.0f ms, %.0f ms, ", p50 * 1000, p99 * 1000)
                + report.verdict(p50 <= 0.3 && p99 <= 1) + ".")
    }

    /// Each reading's delay to the first event showing it: for every tile of an event, the
    /// newest reading of its participant with the heart rate shown, sent before the event was
    /// read and after the last one matched.
    static func delays(lines: [(line: String, at: ContinuousClock.Instant)], sent: [[(bpm: Double, at: ContinuousClock.Instant)]]) -> [Double] {
        var matched = Array(repeating: -1, count: sent.count)
        var delays: [Double] = []
        for (line, at) in lines where line.hasPrefix("data: ") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any],
                  let tiles = object["tiles"] as? [[String: Any]] else { continue }
            for tile in tiles {
                guard let id = tile["id"] as? String, id.hasPrefix("participant:P"), let index = Int(id.dropFirst(13)),
                      sent.indices.contains(index), let shown = tile["heartRate"] as? Double else { continue }
                let readings = sent[index]
                guard let found = readings.indices.last(where: { $0 > matched[index] && readings[$0].at <= at && readings[$0].bpm == shown })
                else { continue }
                // Only the newest reading before the event counts: an older one was shown by an earlier event.
                guard readings.indices.last(where: { readings[$0].at <= at }) == found else { continue }
                matched[index] = found
                delays.append((at - readings[found].at).benchmarkSeconds)
            }
        }
        return delays
    }

    /// A `curl -N` reader whose output is read here, each line stamped when it arrives.
    final class TimedReader: Sendable {
        let process: Process
        let pipe: Pipe
        let lines = Mutex<[(line: String, at: ContinuousClock.Instant)]>([])
        let done = DispatchSemaphore(value: 0)

        init(port: UInt16) throws {
            process = Process()
            pipe = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            process.arguments = ["-sN", "http://127.0.0.1:\(port)/events"]
            process.standardOutput = pipe
            try process.run()
            let handle = pipe.fileHandleForReading
            Thread.detachNewThread { [self] in
                var pending = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    let at = ContinuousClock.now
                    pending.append(chunk)
                    while let newline = pending.firstIndex(of: 10) {
                        let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                        pending.removeSubrange(pending.startIndex...newline)
                        if !line.isEmpty { self.lines.withLock { $0.append((line, at)) } }
                    }
                }
                self.done.signal()
            }
        }

        /// Stops curl and returns the lines read.
        func finish() -> [(line: String, at: ContinuousClock.Instant)] {
            // SIGKILL, not SIGTERM: a child inherits this process's blocked signals, and after
            // the D-Bus or serial benchmarks SIGTERM may be among them (curl then never exits).
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            done.wait()
            return lines.withLock { $0 }
        }
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
    /// each update as one line).
    static func events(in file: String) -> Int {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.hasPrefix("data:") }.count
    }
}
