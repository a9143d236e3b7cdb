import BLETransport
import BlueZ
import BroadcastDevices
import DBus
import Foundation
import HealthModel
import HealthStore
import SQLiteStore
import SampleBus
import GatewayRuntime
import Synchronization

/// Advertisements through the kit to committed samples (issue #47): 30 broadcasting Polar straps
/// at 4 advertisements a second each (a gym), then at 20 (five times it), on a private dbus-daemon with bluetoothd's stand-in
/// (Benchmarks/advertising-straps.py: python3-dbusmock with the BlueZ tests' template), each
/// advertisement one Device1 `PropertiesChanged` of `ManufacturerData`.
///
/// Timed region, measured path: the real BlueZ scanner (`BluetoothAdapters.bluez`, discovery with
/// `DuplicateData`), the `ble-polar-broadcast` source (profile decoder, frame counter, listener
/// rate check), the real `Gateway` and bus, `SQLiteSink` with its defaults into a `HealthStore`
/// file; from the first advertisement of the phase until the last new value is committed.
/// Baseline, same run, same emitter and load: one D-Bus connection with the scanner's match
/// (every signal from `org.bluez`) reading each signal and doing nothing else.
/// CPU is getrusage of this process only (the emitter and the bus are other processes).
enum AdvertisementsBenchmark {
    static let straps = 30
    /// Each strap's advertisements per second in the two phases: a strap's own rate (a gym's
    /// 30 straps), then five times it (how the cost per advertisement moves with the load). Not
    /// higher: the emitter (two Python processes and the bus on the same 2 cores) fell behind at
    /// 30 × 40/s, sending 1 034 to 1 135 a second of the 1 200 asked.
    static let rates = [4.0, 20.0]
    /// The warm-up's rate.
    static let rate = rates[0]
    /// A strap repeats each heart rate in 4 advertisements (the emitter advances its counter
    /// every 4th): one new value a second per strap.
    static let advertisementsPerValue = 4.0

    static func run(seconds: Double, report: inout Report) async throws {
        report.section("advertisements: broadcasting straps over D-Bus → ble-polar-broadcast → committed samples")
        report.line(
            "\(straps) Polar straps × \(rates.map { String(Int($0)) }.joined(separator: " then ")) advertisements/s (each a Device1 PropertiesChanged of ManufacturerData on a private "
                + "dbus-daemon, sent by python3-dbusmock as bluetoothd would; a new heart rate every \(Int(advertisementsPerValue))th), "
                + "\(Int(seconds)) s per phase. Measured: BlueZ scanner → `ble-polar-broadcast` → Gateway/SampleBus → `SQLiteSink` "
                + "(defaults) on a real file. Baseline: a D-Bus client with the scanner's match receiving the same signals and doing nothing. "
                + "CPU = getrusage delta of this process (the emitter and dbus-daemon are not counted).")
        report.line("")
        let environment = try BenchmarkEnvironment(name: "advertisements")
        defer { environment.removeAll() }
        let emitter = try await StrapEmitter.start()
        defer { emitter.stop() }

        // Baseline: the same signals read by a client that does nothing with them, each rate.
        var baselines: [Phase] = []
        for rate in rates {
            baselines.append(try await receiveOnly(address: emitter.address, rate: rate, seconds: seconds, emitter: emitter))
        }

        // Measured: the kit's path to the store.
        let bluetooth = BluetoothAdapters.bluez(
            limits: AdapterScheduler.Limits(), clock: environment.clock, logger: environment.logger,
            variables: ["DBUS_SYSTEM_BUS_ADDRESS": emitter.address])
        let polar = environment.plugin("polar")
        let source = PolarBroadcastSource(
            settings: try BroadcastSourceConfiguration().validated(in: polar), environment: polar, bluetooth: bluetooth)
        let kit = try await RecordedGateway(
            sources: [ConfiguredSource(name: "polar", kind: PolarBroadcastSource.kind, source: source)],
            file: "advertisements.sqlite", recording: true, environment: environment)
        defer { kit.requestStop() }
        let recorder = kit.recorder
        // Warm-up: the scan starts and every strap is discovered (InterfacesAdded) and stored once.
        // The scan has no "listening" event to wait for: warm-up phases of 2 s until every strap
        // was committed (at most 10).
        for _ in 0..<10 where recorder.totals.straps < straps {
            _ = try await emitter.run(straps: straps, rate: rate, seconds: 2)
            try await settle { recorder.totals.heartRates }
        }

        var measured: [(phase: Phase, transactions: Int, straps: Int, expected: Int)] = []
        for rate in rates {
            let before = recorder.totals
            let cpu0 = Harness.cpuSeconds()
            let t0 = ContinuousClock.now
            let sent = try await emitter.run(straps: straps, rate: rate, seconds: seconds)
            let sendingWall = (ContinuousClock.now - t0).benchmarkSeconds
            let expected = Int((Double(sent.count) / advertisementsPerValue).rounded())
            // Until the phase's last new values are committed (or stop coming).
            try await settle {
                let committed = recorder.totals.heartRates
                return committed - before.heartRates >= expected ? -1 : committed
            }
            let cpu = Harness.cpuSeconds() - cpu0
            let wall = (ContinuousClock.now - t0).benchmarkSeconds
            let after = recorder.totals
            measured.append((
                Phase(
                    rate: rate, sent: sent.count, late: sent.late, received: after.heartRates - before.heartRates, cpu: cpu, wall: wall,
                    sendingWall: sendingWall),
                after.transactions - before.transactions, after.straps, expected))
        }
        let status = kit.gateway.statusBoard.snapshot().first { $0.name == "polar" }
        await kit.stop()

        var rows: [[String]] = []
        for (baseline, run) in zip(baselines, measured) {
            rows.append([
                "\(Int(baseline.rate))/s per strap", "baseline: D-Bus client, does nothing", Harness.format(Double(baseline.sent)),
                Harness.format(Double(baseline.sent) / baseline.sendingWall), "\(baseline.received) PropertiesChanged",
                String(format: "%.1f %%", baseline.cpu / baseline.wall * 100), String(format: "%.1f µs", baseline.perAdvertisement * 1e6),
            ])
            rows.append([
                "\(Int(run.phase.rate))/s per strap", "measured: scanner → Polar profile → bus → SQLite", Harness.format(Double(run.phase.sent)),
                Harness.format(Double(run.phase.sent) / run.phase.sendingWall),
                "\(run.phase.received) heart-rate samples in \(run.transactions) transactions",
                String(format: "%.1f %%", run.phase.cpu / run.phase.wall * 100), String(format: "%.1f µs", run.phase.perAdvertisement * 1e6),
            ])
        }
        report.table(["load", "side", "advertisements sent", "per second", "received / committed", "CPU (share of one core)", "CPU per advertisement"], rows)
        for (baseline, run) in zip(baselines, measured) {
            report.line(
                String(
                    format: "Ratio at %.0f advertisements/s: the kit's path costs %.2f× the CPU per advertisement of receiving the signals and "
                        + "doing nothing (%.1f µs against %.1f µs); advertisements through the kit: %.0f/s, committed heart-rate samples: %.1f/s.",
                    Double(straps) * run.phase.rate, run.phase.perAdvertisement / max(baseline.perAdvertisement, 1e-12),
                    run.phase.perAdvertisement * 1e6, baseline.perAdvertisement * 1e6,
                    Double(run.phase.sent) / run.phase.sendingWall, Double(run.phase.received) / run.phase.sendingWall))
        }
        if let rates = status?.metrics.filter({ $0.key.name == "advertisements_per_second" }).map(\.value), !rates.isEmpty {
            report.line(String(format: "Rate the listener measured per strap at the end: min %.2f/s, max %.2f/s.", rates.min() ?? 0, rates.max() ?? 0))
        }
        report.line(
            "Emitter slots more than 100 ms late: baseline \(baselines.map { String($0.late) }.joined(separator: ", ")), "
                + "measured \(measured.map { String($0.phase.late) }.joined(separator: ", ")).")
        for (baseline, run) in zip(baselines, measured) {
            let asked = Double(straps) * run.phase.rate
            let at = "at \(Int(asked))/s"
            report.load("advertisements sent per second, baseline \(at)", asked: asked, got: Double(baseline.sent) / baseline.sendingWall)
            report.load("PropertiesChanged the baseline received (of those sent) \(at)", asked: Double(baseline.sent), got: Double(baseline.received), share: 0.99)
            report.load("advertisements sent per second, measured \(at)", asked: asked, got: Double(run.phase.sent) / run.phase.sendingWall)
            report.load("heart-rate samples committed (one per new value sent) \(at)", asked: Double(run.expected), got: Double(run.phase.received), share: 0.99)
        }
        report.load("straps whose samples were committed", asked: Double(straps), got: Double(measured.last?.straps ?? 0), share: 1)
        let problems = environment.logSink.summary
        if problems.warnings + problems.errors > 0 {
            report.line("Warnings/errors logged: \(problems.warnings)/\(problems.errors), last: \(problems.last ?? "")")
        }
        report.line("Budget: none set; issue #47 asks for these figures against the baseline.")
    }

    /// One phase's figures: the rate per strap, advertisements sent (and late), what arrived
    /// (signals for the baseline, committed samples for the measured path), CPU and wall seconds
    /// (to the last arrival), and the sending's wall seconds.
    struct Phase {
        var rate: Double
        var sent: Int
        var late: Int
        var received: Int
        var cpu: Double
        var wall: Double
        var sendingWall: Double
        var perAdvertisement: Double { cpu / Double(max(1, sent)) }
    }

    /// What the advertisement baselines do (this benchmark's and the `class` benchmark's): a
    /// D-Bus connection with the scanner's match reads every signal and does nothing with it.
    /// Only PropertiesChanged are counted, for the load check (the stand-in also emits
    /// dbusmock's MethodCalled per Advertise call, which the scanner's match receives as well).
    final class SignalReceiver: Sendable {
        private let connection: DBusConnection
        private let state = Mutex<(received: Int, reader: Task<Void, any Error>?)>((0, nil))

        /// Connects to `address` and starts reading.
        init(address: String) async throws {
            connection = try DBusConnection(address: address)
            let signals = try await connection.signals(matching: DBusMatchRule(sender: "org.bluez"), bufferLimit: 1 << 16)
            // Holds the receiver until ``close()`` cancels it.
            let reader = Task { [self] in
                for try await signal in signals where signal.member == "PropertiesChanged" { state.withLock { $0.received += 1 } }
            }
            state.withLock { $0.reader = reader }
        }

        /// The PropertiesChanged signals received so far.
        var received: Int { state.withLock { $0.received } }

        /// Stops reading and closes the connection.
        func close() {
            state.withLock { $0.reader?.cancel() }
            connection.close()
        }
    }

    /// The baseline phase: ``SignalReceiver`` alone.
    static func receiveOnly(address: String, rate: Double, seconds: Double, emitter: StrapEmitter) async throws -> Phase {
        let receiver = try await SignalReceiver(address: address)
        defer { receiver.close() }
        _ = try await emitter.run(straps: straps, rate: rate, seconds: 2)
        try await settle { receiver.received }
        let before = receiver.received
        let cpu0 = Harness.cpuSeconds()
        let t0 = ContinuousClock.now
        let sent = try await emitter.run(straps: straps, rate: rate, seconds: seconds)
        let sendingWall = (ContinuousClock.now - t0).benchmarkSeconds
        try await settle { receiver.received - before >= sent.count ? -1 : receiver.received }
        let cpu = Harness.cpuSeconds() - cpu0
        let wall = (ContinuousClock.now - t0).benchmarkSeconds
        return Phase(
            rate: rate, sent: sent.count, late: sent.late, received: receiver.received - before, cpu: cpu, wall: wall,
            sendingWall: sendingWall)
    }

    /// Waits until `condition` holds, polling every 10 ms; throws after `seconds`.
    static func waitFor(seconds: Double, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw EmitterFailure(message: "timed out after \(seconds) s") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until `count` returns -1 (done) or stops changing for 500 ms (at most 10 s).
    static func settle(_ count: () -> Int) async throws {
        var last = count(), stable = ContinuousClock.now
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            let now = count()
            if now == -1 { return }
            if now != last {
                last = now
                stable = ContinuousClock.now
            } else if ContinuousClock.now - stable > .milliseconds(500) {
                return
            }
        }
    }
}

/// Benchmarks/advertising-straps.py as a child process: the private bus, bluetoothd's stand-in
/// and the paced straps. Its pipes are read on a Dispatch queue, never on the cooperative pool.
final class StrapEmitter: Sendable {
    let address: String
    private let process: Process
    private let input: FileHandle
    private let output: LineReader

    private init(address: String, process: Process, input: FileHandle, output: LineReader) {
        self.address = address
        self.process = process
        self.input = input
        self.output = output
    }

    /// Starts the script with Debian's python3 (python3-dbusmock, which
    /// `scripts/install-dependencies --test` installs) and waits for the bus's address.
    static func start() async throws -> StrapEmitter {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["Benchmarks/advertising-straps.py"]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        let output = LineReader(stdout.fileHandleForReading)
        guard let address = await output.line(), address.hasPrefix("unix:") else {
            process.terminate()
            throw EmitterFailure(message: "Benchmarks/advertising-straps.py did not start (it needs dbus-daemon and python3-dbusmock, which scripts/install-dependencies --test installs; Benchmarks/run runs it)")
        }
        return StrapEmitter(address: address, process: process, input: stdin.fileHandleForWriting, output: output)
    }

    /// One paced phase; returns the advertisements sent and how many went out late.
    func run(straps: Int, rate: Double, seconds: Double) async throws -> (count: Int, late: Int) {
        let line = try await command("run \(straps) \(rate) \(seconds)")
        let words = line.split(separator: " ")
        guard words.count == 3, words[0] == "sent", let count = Int(words[1]), let late = Int(words[2]) else {
            throw EmitterFailure(message: "the emitter answered \(line)")
        }
        return (count, late)
    }

    /// Sends one command line (Benchmarks/advertising-straps.py lists them) and returns its answer.
    /// - Throws: ``EmitterFailure`` when the script exited.
    func command(_ line: String) async throws -> String {
        input.write(Data((line + "\n").utf8))
        guard let answer = await output.line() else { throw EmitterFailure(message: "the emitter exited") }
        return answer
    }

    /// Stops the script, which stops its daemons.
    func stop() {
        input.write(Data("quit\n".utf8))
        process.waitUntilExit()
    }
}

/// Reads lines from a pipe on its own Dispatch queue (a blocking read), one at a time.
final class LineReader: Sendable {
    private let handle: FileHandle
    private let queue = DispatchQueue(label: "healthgate-benchmarks.emitter")
    private let buffer = Mutex([UInt8]())

    init(_ handle: FileHandle) { self.handle = handle }

    /// The next line without its newline; nil at the end of the stream.
    func line() async -> String? {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                while true {
                    let line: String? = buffer.withLock { bytes in
                        guard let newline = bytes.firstIndex(of: 0x0A) else { return nil }
                        let text = String(decoding: bytes[..<newline], as: UTF8.self)
                        bytes.removeSubrange(...newline)
                        return text
                    }
                    if let line { return continuation.resume(returning: line) }
                    let chunk = handle.availableData
                    if chunk.isEmpty { return continuation.resume(returning: nil) }
                    buffer.withLock { $0 += chunk }
                }
            }
        }
    }
}

struct EmitterFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

extension CommitRecorder.Totals {
    /// The heart-rate samples committed: one per new value a strap sent.
    fileprivate var heartRates: Int { samples[.heartRate] ?? 0 }
    /// The straps whose heart rates were committed.
    fileprivate var straps: Int { devices[.heartRate]?.count ?? 0 }
}
