import BLEProfileKit
import BLETransport
import Foundation
import HealthModel
import HealthStore
import HeartRateMonitor
import SQLiteStore
import SampleBus
import GatewayRuntime

/// End-to-end latency under load: 1 000 simulated heart-rate monitors at 1 Hz each, through the
/// real source (``HeartRateSource`` over ``SimulatedBLETransport``: real payload bytes, the real
/// decoder and mapper), the real ``Gateway`` and bus, into ``SQLiteSink`` in batches of 500 with
/// a 100 ms window: the window a user sets who wants readings in the store within a tenth of a
/// second (the default is a second since issue 64, for the card's sake), so that the budget
/// (the window + 20 ms) judges the commit path, its sync included, not the wait.
///
/// Latency of a heart-rate sample = the sink's commit date (``SQLiteSink/onCommit``, the clock
/// read right after the transaction committed) − the sample's start date. The simulated transport
/// makes the payload bytes and the source stamps the arrival date right after it receives them,
/// so the start date is the moment the bytes were created (to within the hop between two tasks).
enum LatencyBenchmark {
    static func run(seconds: Double, report: inout Report) async throws {
        let monitors = 1000
        let pedometers = 50
        let warmUp = 10.0
        let measured = max(5, seconds - warmUp)
        report.section("End-to-end latency (\(monitors) heart-rate monitors and \(pedometers) pedometers at 1 Hz)")
        report.line("Load: \(monitors) simulated HRMs (`SimulatedBLETransport`, real 0x2A37 payloads with energy expended and RR intervals) "
            + "→ `HeartRateSource` (real decoder, mapper, heartbeat series), plus \(pedometers) pedometers simulated at the decoder level "
            + "(one checksummed HGP/1 `ST` line per second each, through the real line framer, HGP/1 decoder and `StepCounter`; no tty) "
            + "→ Gateway/SampleBus → `SQLiteSink` "
            + "(batchSize 500, window 100 ms: `batchWindowSeconds` 0.1, the default being 2 s) on a real file. Latency = commit date (`onCommit`) − sample date (bytes created). "
            + "Warm-up \(Int(warmUp)) s (connections), then \(Int(measured)) s measured; CPU = getrusage delta of the whole process / wall time.")
        report.line("")
        let environment = try BenchmarkEnvironment(name: "latency")
        defer { environment.removeAll() }

        // Baseline for the CPU figure: the pacing alone. 1 000 tasks each sleeping on the same
        // clock and schedule and making a 10-byte payload, as the simulated transport does per notification,
        // and nothing else. Real BLE devices have no such timers (BlueZ's D-Bus messages wake us
        // instead), so this is the simulator's own cost inside the measured CPU.
        let pacingSeconds = 10.0
        let pacingCPU0 = Harness.cpuSeconds()
        let pacingStart = ContinuousClock.now
        await withTaskGroup(of: Int.self) { group in
            for device in 0..<monitors {
                group.addTask {
                    var sum = 0
                    let deadline = ContinuousClock.now + .seconds(pacingSeconds)
                    // Exactly the simulated transport's schedule.
                    let schedule = NotificationSchedule(device: device, period: .seconds(1), start: environment.clock.now())
                    var count: Int64 = 0
                    while ContinuousClock.now < deadline {
                        try? await environment.clock.sleep(for: schedule.wait(for: count, now: environment.clock.now()))
                        count += 1
                        let payload: [UInt8] = [0x1E, UInt8(60 + device % 90), 0x10, 0x00, 0x00, 0x04]
                        sum &+= payload.count
                    }
                    return sum
                }
            }
            for await sum in group { blackHole(sum) }
        }
        let pacingShare = (Harness.cpuSeconds() - pacingCPU0) / (ContinuousClock.now - pacingStart).benchmarkSeconds

        // The gateway's Bluetooth is one simulated adapter that holds a link for every monitor: a
        // real controller holds at most 20 (`bluetooth.adapterLimits.connections`), and this
        // measures the gateway's pipeline, not the radio. (The configured simulated transport
        // simulates at most 16 devices.)
        let hrm = environment.plugin("hrm")
        let simulated = SimulatedBLETransport(
            clock: hrm.clock, settings: HeartRateSimulationConfiguration(heartRateMonitors: monitors, footPods: 0, notificationsPerSecond: 1))
        let bluetooth = BluetoothAdapters(
            limits: AdapterScheduler.Limits(connections: monitors), clock: hrm.clock, transport: { _ in simulated },
            watchdog: false)
        let source = HeartRateSource(
            settings: try HeartRateSourceConfiguration(maxDevices: monitors).validated(in: hrm), environment: hrm,
            bluetooth: bluetooth)
        let measuredPath = try await RecordedGateway(
            sources: [
                ConfiguredSource(name: "hrm", kind: HeartRateSource.kind, source: source),
                ConfiguredSource(
                    name: "pedometers", kind: "serial-pedometer",
                    source: SimulatedPedometers(count: pedometers, ids: SampleIDGenerator())),
            ],
            file: "latency.sqlite", environment: environment)
        defer { measuredPath.requestStop() }
        let recorder = measuredPath.recorder

        try await Task.sleep(for: .seconds(warmUp))
        recorder.start()
        let cpu0 = Harness.cpuSeconds()
        let t0 = ContinuousClock.now
        try await Task.sleep(for: .seconds(measured))
        let cpu = Harness.cpuSeconds() - cpu0
        let wall = (ContinuousClock.now - t0).benchmarkSeconds
        let result = Figures(recorder.stop())
        await measuredPath.stop()

        let p50 = result.heartRate.quantile(0.5) ?? .nan
        let p99 = result.heartRate.quantile(0.99) ?? .nan
        let maximum = result.heartRate.max() ?? .nan
        let share = cpu / wall
        let budget = measuredPath.batchWindow.seconds + 0.020
        let status = measuredPath.gateway.statusBoard.snapshot()
        let dropped = status.reduce(0) { $0 + $1.dropped }
        let stepP99 = result.steps.quantile(0.99) ?? .nan
        report.table(
            ["heart-rate samples", "records committed", "transactions", "p50", "p99", "max", "CPU (share of one core)"],
            [[Harness.format(Double(result.heartRate.count)), Harness.format(Double(result.records)),
              Harness.format(Double(result.transactions)),
              String(format: "%.1f ms", p50 * 1000), String(format: "%.1f ms", p99 * 1000),
              String(format: "%.1f ms", maximum * 1000), String(format: "%.1f %%", share * 100)]])
        report.line(String(format: "Step samples (pedometers): %d, latency p50 %.1f ms, p99 %.1f ms, max %.1f ms.",
                           result.steps.count, (result.steps.quantile(0.5) ?? .nan) * 1000, stepP99 * 1000,
                           (result.steps.max() ?? .nan) * 1000))
        let gaps = zip(result.commitDates.dropFirst(), result.commitDates).map { $0.timeIntervalSince($1) }
        report.line(String(
            format: "Transactions: %.1f/s, records per transaction p50 %.0f / max %.0f; time between commits p50 %.0f ms, p99 %.0f ms, max %.0f ms; "
                + "oldest sample per transaction p50 %.0f ms, p99 %.0f ms.",
            Double(result.transactions) / wall, result.batchSizes.quantile(0.5) ?? 0, result.batchSizes.max() ?? 0,
            (gaps.quantile(0.5) ?? 0) * 1000, (gaps.quantile(0.99) ?? 0) * 1000, (gaps.max() ?? 0) * 1000,
            (result.oldest.quantile(0.5) ?? 0) * 1000, (result.oldest.quantile(0.99) ?? 0) * 1000))
        let busiest = Double(result.arrivalTenths.max() ?? 0) / Double(max(1, result.heartRate.count))
        report.line(String(format: "Load shape: the busiest tenth of a second held %.0f %% of the heart-rate payloads (10 %% = evenly spread).",
                           busiest * 100))
        report.line("Records dropped: \(dropped).")
        report.load("heart-rate monitors whose samples were committed", asked: Double(monitors), got: Double(result.monitors))
        report.load("heart-rate samples committed per second", asked: Double(monitors), got: Double(result.heartRate.count) / wall)
        report.load("pedometers whose steps were committed", asked: Double(pedometers), got: Double(result.pedometers))
        report.load("step samples committed per second", asked: Double(pedometers), got: Double(result.steps.count) / wall)
        report.line(String(format: "CPU baseline, the simulator's pacing alone (1 000 tasks on the simulated transport's schedule: 1 Hz, spread over the second, wake-ups on a 10 ms grid; each makes a payload; %.0f s): "
            + "%.1f %% of one core; the gateway's own share is therefore about %.1f %%.", pacingSeconds, pacingShare * 100,
            (share - pacingShare) * 100))
        let problems = environment.logSink.summary
        if problems.warnings + problems.errors > 0 {
            report.line("Warnings/errors logged: \(problems.warnings)/\(problems.errors), last: \(problems.last ?? "")")
        }
        report.line(String(format: "Budget: p99 ≤ %.0f ms (window + 20 ms): heart rate %.1f ms, steps %.1f ms, ", budget * 1000, p99 * 1000, stepP99 * 1000)
            + report.verdict(max(p99, stepP99) <= budget) + String(format: "; CPU ≤ 10 %% of one core: %.1f %%, ", share * 100)
            + report.verdict(share <= 0.10) + ".")
    }

    /// The latency figures of a recording.
    struct Figures {
        /// Heart rate: commit date − the moment its payload bytes were made, per sample.
        var heartRate: [Double]
        /// The monitors whose samples were committed: the devices connected.
        var monitors: Int
        /// Steps: commit date − the moment the line's bytes were made (the sample's end), per sample.
        var steps: [Double]
        var pedometers: Int
        var records: Int
        var transactions: Int
        var commitDates: [Date]
        var batchSizes: [Double]
        /// Per transaction: its oldest heart-rate sample's age at commit.
        var oldest: [Double]
        /// Heart-rate samples by the tenth of a second their payload was made in (the load's
        /// shape: 10 % each when devices are spread over the second, 100 % in one when they all
        /// notify together).
        var arrivalTenths: [Int]

        init(_ recording: CommitRecorder.Recording) {
            let heartRates = recording.samples(of: .heartRate)
            heartRate = heartRates.map(\.sinceStart)
            monitors = recording.totals.devices[.heartRate]?.count ?? 0
            steps = recording.samples(of: .stepCount).map(\.sinceEnd)
            pedometers = recording.totals.devices[.stepCount]?.count ?? 0
            records = recording.totals.records
            transactions = recording.totals.transactions
            commitDates = recording.transactions.map(\.date)
            batchSizes = recording.transactions.map { Double($0.records) }
            oldest = recording.transactions.map { transaction in
                transaction.samples.filter { $0.type == .heartRate }.map(\.sinceStart).max() ?? 0
            }
            arrivalTenths = [Int](repeating: 0, count: 10)
            for sample in heartRates {
                let fraction = sample.start.timeIntervalSince1970.truncatingRemainder(dividingBy: 1)
                arrivalTenths[min(9, max(0, Int(fraction * 10)))] += 1
            }
        }
    }
}
