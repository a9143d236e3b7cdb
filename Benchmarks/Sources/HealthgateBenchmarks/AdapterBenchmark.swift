import AdapterHost
import Foundation
import HealthModel
import HealthStore
import HealthgateAdapter
import SQLiteStore
import SampleBus
import Synchronization

/// What the process boundary costs: readings from an adapter (a real child process writing the
/// protocol's lines on its stdout) through the gateway's ``AdapterRun`` (reading, decoding each
/// line strictly, the reading checks, the record) → SampleBus → ``SQLiteSink`` (batches of 1000,
/// window 100 ms) → committed with their checkpoints, against the same records, made before the
/// clock starts, published by an in-process source on the same bus into the same sink: what a
/// compiled-in source's readings cost from the bus on.
///
/// The adapter is `sh -c 'cat LINES; exec cat > /dev/null'`: the lines of a real adapter's
/// session written as fast as the pipe takes them (its hello, a device, weighings with their ids,
/// a checkpoint every 1000), then waiting for the end of its stdin (the gateway's stop), so that
/// the measured figure is the gateway's side. Timed from the run's start to the last reading
/// committed (the sink's commit hook); the load is checked: every reading in the store, once.
enum AdapterBenchmark {
    static func run(report: inout Report) async throws {
        report.section("Readings from an adapter")
        let count = 100_000
        report.line(
            "Measured: an adapter process writing \(Harness.format(Double(count))) `quantity` lines (bodyMass, each with its `id`, "
                + "a `checkpoint` every 1000) on its stdout → `AdapterRun` (read, decoded strictly, checked, made records) → SampleBus "
                + "→ SQLiteSink (batches of 1000, window 100 ms) → committed with the checkpoints. Baseline: the same records, made "
                + "before the clock starts, published in chunks of 100 by an in-process source on the same bus into the same sink. "
                + "Best of 3 each by wall time, alternating.")
        report.line("")
        let environment = try BenchmarkEnvironment(name: "adapter")
        defer { environment.removeAll() }
        // The session's lines, as an adapter writes them.
        var lines = [AdapterHello(adapter: "bench-scale", version: "1.0").line, DeviceMessage(id: "BS-1", name: "Bench scale").line]
        let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
        for index in 0..<count {
            let when = RFC3339.string(from: start.addingTimeInterval(Double(index) * 60))
            lines.append(QuantityMessage(
                .bodyMass, value: 60 + Double(index % 400) / 10, unit: .kilogram, start: when, id: "BS-1/\(index)", device: "BS-1").line)
            if index % 1000 == 999 { lines.append(CheckpointMessage(state: ["sent": .number(Double(index + 1))]).line) }
        }
        let file = environment.path("session.jsonl")
        try Data(lines.joined()).write(to: URL(fileURLWithPath: file))
        // The baseline's records: the gateway's own conversion of the same lines, made once.
        var converter = AdapterReadingConverter(sourceName: "bench", ids: SampleIDGenerator())
        var records: [HealthRecord] = []
        for line in lines {
            let message = try AdapterOutput(line: line.dropLast())
            switch message {
            case .device(let device): converter.describe(device)
            case .quantity: records.append(try converter.record(message, now: Date()))
            default: break
            }
        }
        let chunks = BenchmarkSamples.chunks(records)

        var bestMeasured = Double.infinity, bestBaseline = Double.infinity
        var cpuMeasured = Double.infinity, cpuBaseline = Double.infinity
        for repetition in 0..<3 {
            let basePath = environment.path("baseline-\(repetition).sqlite")
            let base = try await ingest(path: basePath, environment: environment, expected: count) { publisher, _ in
                for chunk in chunks { await publisher.publish(chunk) }
            }
            bestBaseline = min(bestBaseline, base.wall)
            cpuBaseline = min(cpuBaseline, base.cpu)
            try IngestBenchmark.check(path: basePath, expected: count)

            let path = environment.path("adapter-\(repetition).sqlite")
            let measured = try await ingest(path: path, environment: environment, expected: count) { _, context in
                let settings = AdapterSettings(
                    executable: "/bin/sh", arguments: ["sh", "-c", "cat '\(file)'; exec cat > /dev/null"], environment: [],
                    directory: environment.directory.path)
                let run = AdapterRun(settings: settings, name: "bench", gateway: "bench", ids: SampleIDGenerator(), context: context)
                _ = try? await run.run()
            }
            bestMeasured = min(bestMeasured, measured.wall)
            cpuMeasured = min(cpuMeasured, measured.cpu)
            try IngestBenchmark.check(path: path, expected: count)
            for file in [path, basePath] {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
            }
        }
        let rate = Double(count) / bestMeasured, baseRate = Double(count) / bestBaseline
        report.table(
            ["readings", "measured (wall)", "baseline: in-process source (wall)", "ratio", "CPU per reading measured / baseline"],
            [[
                Harness.format(Double(count)), Harness.format(rate) + " readings/s", Harness.format(baseRate) + " readings/s",
                String(format: "**%.2f×**", rate / baseRate),
                String(format: "%.1f µs / %.1f µs", cpuMeasured / Double(count) * 1e6, cpuBaseline / Double(count) * 1e6),
            ]])
        let problems = environment.logSink.summary
        if problems.warnings + problems.errors > 0 {
            report.line("Warnings/errors logged: \(problems.warnings)/\(problems.errors), last: \(problems.last ?? "")")
        }
        report.line(
            "Budget: ≥ 0.25× the in-process source (an adapter's reading may cost up to four of a compiled-in one's), and "
                + "≥ 20 000 readings/s: " + String(format: "%.2f×, %@ readings/s, ", rate / baseRate, Harness.format(rate))
                + report.verdict(rate / baseRate >= 0.25 && rate >= 20_000))
    }

    /// A store, its sink and a bus; `feed` publishes (and returns when done); timed until
    /// `expected` readings are committed. Returns the wall and CPU seconds.
    private static func ingest(
        path: String, environment: BenchmarkEnvironment, expected: Int,
        feed: @escaping @Sendable (SamplePublisher, SourceContext) async -> Void
    ) async throws -> (wall: Double, cpu: Double) {
        let store = try await HealthStore.open(path: path)
        var plugin = environment.plugin("sqlite")
        plugin.store = store
        var sink = try SQLiteSink(settings: .init(batchSize: 1000, batchWindow: .milliseconds(100)), environment: plugin)
        let committed = CommitCounter()
        sink.onCommit = { records, _ in committed.add(records.count) }
        let board = StatusBoard()
        let status = board.register(name: "sqlite", kind: SQLiteSink.kind, role: .sink)
        let bus = SampleBus(
            sinks: [("sqlite", QueueConfiguration(capacity: 10_000, policy: .block), { _ in true }, status)],
            storesCheckpoints: [true], checkpoints: CheckpointLedger(durable: store))
        let inbox = bus.subscriptions[0].inbox
        let sourceStatus = board.register(name: "bench", kind: "exec", role: .source)
        let publisher = SamplePublisher(bus: bus, status: sourceStatus)
        let sourceContext = SourceContext(publisher: publisher, logger: environment.logger, clock: environment.clock, status: sourceStatus)
        let sinkContext = SinkContext(logger: environment.logger, clock: environment.clock, status: status)
        let cpu = Harness.cpuSeconds()
        let start = ContinuousClock.now
        let sinkTask = Task { try await sink.run(inbox: inbox, context: sinkContext) }
        let source = Task { await feed(publisher, sourceContext) }
        let deadline = ContinuousClock.now + .seconds(300)
        while committed.value < expected {
            guard ContinuousClock.now < deadline else {
                throw IngestBenchmark.SQLiteFailure(description: "\(path): \(committed.value) of \(expected) readings committed in 300 s")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        let wall = (ContinuousClock.now - start).benchmarkSeconds
        let used = Harness.cpuSeconds() - cpu
        source.cancel()
        await source.value
        bus.finish()
        _ = try await sinkTask.value
        await store.close()
        return (wall, used)
    }
}

/// The records the sink committed so far.
private final class CommitCounter: Sendable {
    private let count = Mutex(0)
    func add(_ value: Int) { count.withLock { $0 += value } }
    var value: Int { count.withLock { $0 } }
}
