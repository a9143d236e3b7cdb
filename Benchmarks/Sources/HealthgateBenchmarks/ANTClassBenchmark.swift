import ANTHeartRate
import ANTProtocol
import Dispatch
import Foundation
import GatewayRuntime
import HealthModel
import HealthStore
import LinuxSystem
import SQLiteStore
import SampleBus
import Synchronization

/// A class of 30 ANT+ heart-rate straps at their real rate (each broadcasting every 8070/32768 s,
/// about 4.06 a second, at its own phase) through one stick: the stick emulator
/// (`Tests/Fixtures/ant_stick_emulator.py`, another process, on a real pseudo-terminal) → the real
/// ``ANTHeartRateSource`` (`transport: stick`: the serial connector opens the pty as a stick's tty,
/// the session sets the stick up for continuous scan, frames, decodes and records each broadcast)
/// → the real ``Gateway`` and bus → ``SQLiteSink`` with its defaults on a real file (WAL).
///
/// Timed region: from a tick of the source's `broadcasts` status detail after a warm-up (every
/// strap met, the setup done) to the first tick `seconds` later. CPU = getrusage of this process
/// over it (the emulator is another process, so this is the gateway's side alone), per broadcast
/// the source received in it. Delay of a broadcast = the sink's commit date (``SQLiteSink/onCommit``)
/// − its heart-rate sample's date, which the session stamps when the chunk carrying the frame comes
/// off the tty reader; both are read on the benchmark's ``MonotonicDateClock``, so no step of the
/// wall clock enters a delay.
///
/// Baseline, same run: a new emulator, and this process reading its pty alone: the same serial
/// settings, the same `ByteStreamReader`, ``ANTFramer`` and ``ANTMessage`` decoding, the
/// broadcasts counted and nothing else; CPU per broadcast over the same length of time.
enum ANTClassBenchmark {
    static let straps = 30
    /// ANT+ heart-rate monitors broadcast every 8070/32768 s (ANT+ Heart Rate Monitor profile).
    static let broadcastsPerStrapPerSecond = 32768.0 / 8070.0
    static let warmUp = 5.0
    /// The emulator's and the sources' network key: not the ANT+ one ("BENCHKEY").
    static let networkKey = "42454e43484b4559"

    static func run(seconds: Double, report: inout Report) async throws {
        let measured = max(5, seconds)
        let asked = Double(straps) * broadcastsPerStrapPerSecond
        report.section("ANT+ class (\(straps) straps through one stick, continuous scan)")
        report.line("Load: the ANT stick emulator (`Tests/Fixtures/ant_stick_emulator.py`, another process) plays \(straps) straps "
            + "on a real pseudo-terminal, each broadcasting every 8070/32768 s at its own phase (\(Harness.format(asked)) broadcasts/s) "
            + "→ `ANTHeartRateSource` (`transport: stick`: the real serial connector, setup, framer, decoder, beat tracker, "
            + "heartbeat series, checkpoints) → Gateway/SampleBus → `SQLiteSink` with defaults (batchSize 500, window 100 ms) on a real file. "
            + "Delay = commit date (`onCommit`) − sample date (the chunk's arrival off the tty reader), on a monotonic clock. "
            + "Warm-up \(Int(warmUp)) s, then \(Int(measured)) s measured; CPU = getrusage delta of this process (the emulator is not in it) "
            + "per broadcast received. Baseline, same run: reading and framing the same emulator's bytes alone (the same serial settings, "
            + "`ByteStreamReader`, `ANTFramer`, `ANTMessage`), \(Int(measured)) s.")
        report.line("")
        let clock = MonotonicDateClock()
        let environment = try BenchmarkEnvironment(name: "ant-class", clock: clock)
        defer { environment.removeAll() }
        let keyFile = environment.path("ant-network-key")
        try Data("\(networkKey)\n".utf8).write(to: URL(fileURLWithPath: keyFile))

        // The source's side.
        let source = try await measureSource(environment: environment, keyFile: keyFile, seconds: measured)
        // The baseline: the bytes read and framed alone.
        let baseline = try await measureBaseline(environment: environment, seconds: measured)

        let perBroadcast = source.cpu / Double(max(1, source.broadcasts))
        let basePerBroadcast = baseline.cpu / Double(max(1, baseline.broadcasts))
        let p50 = source.delays.quantile(0.5) ?? .nan
        let p99 = source.delays.quantile(0.99) ?? .nan
        let maximum = source.delays.max() ?? .nan
        report.table(
            ["side", "broadcasts", "per second", "CPU per broadcast", "CPU (share of one core)", "delay p50", "delay p99", "delay max"],
            [["source → store", Harness.format(Double(source.broadcasts)), Harness.format(Double(source.broadcasts) / source.wall, decimals: 1),
              String(format: "%.1f µs", perBroadcast * 1e6), String(format: "%.2f %%", source.cpu / source.wall * 100),
              String(format: "%.1f ms", p50 * 1000), String(format: "%.1f ms", p99 * 1000), String(format: "%.1f ms", maximum * 1000)],
             ["baseline: read and framed alone", Harness.format(Double(baseline.broadcasts)),
              Harness.format(Double(baseline.broadcasts) / baseline.wall, decimals: 1),
              String(format: "%.1f µs", basePerBroadcast * 1e6), String(format: "%.2f %%", baseline.cpu / baseline.wall * 100), "–", "–", "–"]])
        let ratio = perBroadcast / basePerBroadcast
        report.line(String(format: "CPU per broadcast: %.2f× the baseline's (the source's own work: %.1f µs per broadcast).",
                           ratio, (perBroadcast - basePerBroadcast) * 1e6))
        report.line("Committed while measured: \(Harness.format(Double(source.delays.count))) heart-rate samples (one per broadcast "
            + "that carried a new beat), \(Harness.format(Double(source.records))) records in \(Harness.format(Double(source.transactions))) "
            + "transactions; records dropped: \(source.dropped).")
        report.load("straps whose samples were committed", asked: Double(straps), got: Double(source.straps), share: 1)
        report.load("broadcasts the source received per second", asked: asked, got: Double(source.broadcasts) / source.wall, share: 0.9)
        report.load("broadcasts the baseline read per second", asked: asked, got: Double(baseline.broadcasts) / baseline.wall, share: 0.9)
        let problems = environment.logSink.summary
        if problems.warnings + problems.errors > 0 {
            report.line("Warnings/errors logged: \(problems.warnings)/\(problems.errors), last: \(problems.last ?? "")")
        }
        let budget = source.batchWindow + 0.020
        report.line(String(format: "Budget: delay p99 ≤ %.0f ms (window + 20 ms, as `latency`): %.1f ms, ", budget * 1000, p99 * 1000)
            + report.verdict(p99 <= budget)
            + String(format: "; CPU per broadcast ≤ 2× the baseline's (the source, its series, checkpoints and the store cost no more "
                + "than reading the frames does): %.2f×, ", ratio)
            + report.verdict(ratio <= 2) + ".")
    }

    struct SourceRun {
        var cpu = 0.0
        var wall = 0.0
        var broadcasts = 0
        var delays: [Double] = []
        var straps = 0
        var records = 0
        var transactions = 0
        var dropped = 0
        /// The sink's batch window, seconds.
        var batchWindow = 0.0
    }

    private static func measureSource(environment: BenchmarkEnvironment, keyFile: String, seconds: Double) async throws -> SourceRun {
        let link = environment.path("ant-stick")
        let emulator = try Emulator(link: link, log: environment.path("emulator.jsonl"), errors: environment.path("emulator.stderr"))
        defer { emulator.stop() }
        try await emulator.waitForPTY()

        let plugin = environment.plugin("ant-class")
        var configuration = ANTHeartRateConfiguration()
        configuration.transport = .stick
        configuration.path = link
        configuration.networkKeyFile = keyFile
        let source = ANTHeartRateSource(settings: try configuration.validated(in: plugin), environment: plugin)
        let measured = try await RecordedGateway(
            sources: [ConfiguredSource(name: "ant-class", kind: ANTHeartRateSource.kind, source: source)],
            file: "ant-class.sqlite", environment: environment)
        defer { measured.requestStop() }
        let gateway = measured.gateway, recorder = measured.recorder

        func detail(_ key: String) -> String? {
            gateway.statusBoard.snapshot().first { $0.name == "ant-class" }?.details[key]
        }
        func broadcasts() -> Int? { detail("broadcasts").flatMap { Int($0.split(separator: " ").first ?? "") } }
        /// The count at the source's next tick (it updates the detail once a second).
        func nextTick(after previous: Int?) async throws -> Int {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if let count = broadcasts(), count != previous { return count }
                try await Task.sleep(for: .milliseconds(2))
            }
            throw ANTBenchmarkFailure(description: "the ANT source reported no broadcasts for 10 s: \(detail("mode") ?? "no mode"), "
                + "\(environment.logSink.summary.last ?? "nothing logged")")
        }

        let setupDeadline = ContinuousClock.now + .seconds(30)
        while detail("mode")?.hasPrefix("continuous scan") != true {
            guard ContinuousClock.now < setupDeadline else {
                throw ANTBenchmarkFailure(description: "the stick was not set up for continuous scan in 30 s: "
                    + "\(environment.logSink.summary.last ?? "nothing logged")")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .seconds(warmUp))
        var first = try await nextTick(after: nil)
        first = try await nextTick(after: first)
        recorder.start()
        let cpu0 = Harness.cpuSeconds()
        let t0 = ContinuousClock.now
        try await Task.sleep(for: .seconds(seconds - 0.5))
        let last = try await nextTick(after: broadcasts())
        let cpu = Harness.cpuSeconds() - cpu0
        let wall = (ContinuousClock.now - t0).benchmarkSeconds
        let result = recorder.stop()
        // The straps' heart rates; the source names its devices `ant:…`.
        let heartRates = result.samples(of: .heartRate).filter { $0.device?.hasPrefix("ant:") == true }
        let dropped = gateway.statusBoard.snapshot().reduce(0) { $0 + $1.dropped }
        await measured.stop()
        return SourceRun(
            cpu: cpu, wall: wall, broadcasts: last - first, delays: heartRates.map(\.sinceStart),
            straps: Set(heartRates.compactMap(\.device)).count, records: result.totals.records,
            transactions: result.totals.transactions, dropped: dropped, batchWindow: measured.batchWindow.seconds)
    }

    struct BaselineRun {
        var cpu: Double
        var wall: Double
        var broadcasts: Int
    }

    /// Opens the emulator's pty as the source does, sets the stick up for continuous scan (outside
    /// the timed region), then reads, frames and decodes its bytes for `seconds`, counting
    /// broadcasts. `straps` and `emulatorArguments` are the new emulator's (the `class`
    /// benchmark's baseline plays its own class).
    static func measureBaseline(
        environment: BenchmarkEnvironment, seconds: Double, straps: Int = straps, emulatorArguments: [String] = [],
        name: String = "baseline"
    ) async throws -> BaselineRun {
        let link = environment.path("ant-stick-\(name)")
        let emulator = try Emulator(
            link: link, log: environment.path("emulator-\(name).jsonl"), errors: environment.path("emulator-\(name).stderr"),
            straps: straps, arguments: emulatorArguments)
        defer { emulator.stop() }
        try await emulator.waitForPTY()
        let port = try SerialPort.open(path: link, configuration: ANTHeartRateSource.serialConfiguration)
        defer { port.close() }
        let reader = try port.startReading(queue: DispatchQueue(label: "healthgate.bench.ant-baseline"))
        defer { reader.cancel() }
        let broadcasts = Atomic<Int>(0)
        let answers = AsyncStream.makeStream(of: ANTMessage.self, bufferingPolicy: .bufferingNewest(64))

        let reading = Task {
            var framer = ANTFramer()
            var count = 0
            for await event in reader.events {
                guard case .bytes(let bytes) = event else { break }
                for output in framer.append(bytes) {
                    guard case .frame(let frame) = output, let message = try? ANTMessage(frame: frame) else { continue }
                    if case .broadcastData(let broadcast) = message {
                        count += 1
                        blackHole(broadcast)
                        broadcasts.store(count, ordering: .relaxed)
                    } else {
                        answers.continuation.yield(message)
                    }
                }
            }
            answers.continuation.finish()
        }
        defer { reading.cancel() }

        // The setup the source's machine sends (reset, key, channel, wildcard id, RF 57, lib config, scan).
        var replies = answers.stream.makeAsyncIterator()
        guard let key = ANTNetworkKey(hex: networkKey) else { throw ANTBenchmarkFailure(description: "the benchmark's network key") }
        let setup: [ANTMessage] = [
            .resetSystem, .setNetworkKey(network: 0, key: key), .assignChannel(channel: 0, type: 0, network: 0),
            .channelID(channel: 0, id: .wildcard), .channelRFFrequency(channel: 0, frequency: 57),
            .libConfig(flags: ANTBroadcast.channelIDFlag), .openRxScanMode,
        ]
        for command in setup {
            try port.write(command.encoded)
            while true {
                guard let reply = await replies.next() else { throw ANTBenchmarkFailure(description: "the baseline's stick went away") }
                if case .startup = reply, command == .resetSystem { break }
                if case .channelResponse(_, let id, let code) = reply, id == command.id {
                    guard code.isSuccess else { throw ANTBenchmarkFailure(description: "the emulator refused \(command): \(code)") }
                    break
                }
            }
        }
        try await Task.sleep(for: .seconds(2))
        let count0 = broadcasts.load(ordering: .relaxed)
        let cpu0 = Harness.cpuSeconds()
        let t0 = ContinuousClock.now
        try await Task.sleep(for: .seconds(seconds))
        let count = broadcasts.load(ordering: .relaxed) - count0
        let cpu = Harness.cpuSeconds() - cpu0
        let wall = (ContinuousClock.now - t0).benchmarkSeconds
        return BaselineRun(cpu: cpu, wall: wall, broadcasts: count)
    }

    /// The stick emulator with `straps` straps (30 unless told), playing until stopped, its pty at
    /// `link`; `arguments` are more of its options.
    struct Emulator {
        let process: Process
        let link: String

        init(link: String, log: String, errors: String, straps: Int = ANTClassBenchmark.straps, arguments: [String] = []) throws {
            let script = "Tests/Fixtures/ant_stick_emulator.py"
            guard FileManager.default.fileExists(atPath: script) else {
                throw ANTBenchmarkFailure(description: "\(script) not found: run the benchmarks from the repository's root (Benchmarks/run does)")
            }
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [
                script, "--straps", String(straps), "--link", link, "--log", log,
                "--network-key", ANTClassBenchmark.networkKey,
            ] + arguments
            guard FileManager.default.createFile(atPath: errors, contents: nil) else {
                throw ANTBenchmarkFailure(description: "cannot create \(errors)")
            }
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
            process.standardOutput = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            self.link = link
        }

        func waitForPTY() async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == nil {
                guard process.isRunning, ContinuousClock.now < deadline else {
                    throw ANTBenchmarkFailure(description: "the ANT stick emulator made no pty at \(link)")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
    }
}

/// The ANT+ class benchmark could not run its load.
struct ANTBenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}

