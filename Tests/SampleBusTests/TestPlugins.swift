import Foundation
import GatewayTesting
import HealthModel
import GatewayRuntime
import SampleBus
import Synchronization
import XCTest

// Small plugins and helpers shared by the SampleBus tests. None of them sleeps: they are driven
// by the test through streams, and the test waits for state.

/// `count` step records with values `first`, `first + 1`, …, one second apart.
func stepRecords(_ values: Range<Int>, ids: SampleIDGenerator) -> [HealthRecord] {
    values.map { value in
        let start = Date(timeIntervalSince1970: 1_800_000_000 + Double(value))
        // The unit is the type's canonical unit and the interval is forward, so this cannot throw;
        // a failure would be a HealthModel regression and is reported as a test failure by `try`.
        let sample = try? QuantitySample(
            id: ids.next(), type: .stepCount, quantity: Quantity(Double(value), .count), start: start,
            end: start.addingTimeInterval(1))
        guard let sample else { preconditionFailure("could not build step sample \(value)") }
        return .quantity(sample)
    }
}

/// The step values of records, to compare what a sink got with what was published.
func stepValues(_ records: [HealthRecord]) -> [Int] {
    records.map { record in
        guard case .quantity(let sample) = record else { return -1 }
        return Int(sample.quantity.value)
    }
}

/// A source that publishes exactly what the test sends it, then waits for more. It returns when
/// cancelled (its stream ends), as the protocol requires.
final class ScriptedSource: SampleSource {
    private let stream: AsyncStream<[HealthRecord]>
    private let continuation: AsyncStream<[HealthRecord]>.Continuation
    private let publishedCount = Mutex(0)

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: [HealthRecord].self)
    }

    /// Records whose `publish` call has returned.
    var published: Int { publishedCount.withLock { $0 } }

    func send(_ records: [HealthRecord]) {
        continuation.yield(records)
    }

    func run(context: SourceContext) async throws {
        for await records in stream {
            await context.publisher.publish(records)
            publishedCount.withLock { $0 += records.count }
        }
    }
}

/// A source that, once cancelled, returns only when the test releases it: one whose stop waits
/// on a service that does not answer.
final class SlowToStopSource: SampleSource {
    private struct State {
        var running = false
        var released = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    var isRunning: Bool { state.withLock { $0.running } }

    func release() {
        let waiter = state.withLock { state in
            state.released = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func run(context: SourceContext) async throws {
        state.withLock { $0.running = true }
        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(10)) }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let released = state.withLock { state in
                if !state.released { state.waiter = waiter }
                return state.released
            }
            if released { waiter.resume() }
        }
    }
}

/// A source that publishes its records once and returns (done, not failed).
struct OneShotSource: SampleSource {
    var records: [HealthRecord]
    func run(context: SourceContext) async throws {
        await context.publisher.publish(records)
    }
}

/// A source that fails when the test says so (or immediately, for its first `failImmediately`
/// runs), and otherwise idles until cancelled.
final class ControlledSource: SampleSource {
    struct Failure: Error, CustomStringConvertible {
        var run: Int
        var description: String { "boom in run \(run)" }
    }

    private struct State {
        var runs = 0
        var failImmediately: Int
        var trigger: AsyncStream<Void>.Continuation?
    }

    private let state: Mutex<State>

    init(failImmediately: Int = 0) {
        state = Mutex(State(failImmediately: failImmediately))
    }

    /// How many times `run` started.
    var runs: Int { state.withLock { $0.runs } }

    /// Makes the current run throw.
    func fail() {
        state.withLock { $0.trigger }?.yield()
    }

    func run(context: SourceContext) async throws {
        let (stream, trigger) = AsyncStream.makeStream(of: Void.self)
        let (run, immediate) = state.withLock { state -> (Int, Bool) in
            state.runs += 1
            state.trigger = trigger
            guard state.failImmediately > 0 else { return (state.runs, false) }
            state.failImmediately -= 1
            return (state.runs, true)
        }
        if immediate { throw Failure(run: run) }
        for await _ in stream { throw Failure(run: run) }
    }
}

/// A sink that logs every batch it is handed, including the one it fails on, so a test can see
/// that a redelivered batch is the same batch.
final class BatchLoggingSink: SampleSink {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "disk on fire" }
    }

    private struct State {
        var batches: [[HealthRecord]] = []
        var failuresLeft: Int
        var runs = 0
    }

    private let state: Mutex<State>
    private let batchSize: Int

    init(batchSize: Int, failures: Int) {
        self.batchSize = batchSize
        state = Mutex(State(failuresLeft: failures))
    }

    var batches: [[HealthRecord]] { state.withLock { $0.batches } }
    var runs: Int { state.withLock { $0.runs } }

    func run(inbox: SinkInbox, context: SinkContext) async throws {
        state.withLock { $0.runs += 1 }
        while let batch = await inbox.next(maxCount: batchSize) {
            let fail = state.withLock { state -> Bool in
                state.batches.append(batch)
                guard state.failuresLeft > 0 else { return false }
                state.failuresLeft -= 1
                return true
            }
            if fail { throw Failure() }
            context.status.recordsHandled(batch.count, lastDate: nil)
        }
    }
}

/// A value shared between a test and the tasks it starts.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value { mutex.withLock { $0 } }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// A running `Gateway.run`, so that a test can wait for it to return without hanging forever.
final class GatewayRun: Sendable {
    let task: Task<Void, Never>
    private let returned: Locked<Bool>

    init(_ gateway: Gateway, shutdown: ShutdownSignal) {
        let returned = Locked(false)
        self.returned = returned
        task = Task {
            await gateway.run(shutdown: shutdown)
            returned.withLock { $0 = true }
        }
    }

    /// Runs `gateway` until the returned signal stops it.
    static func start(_ gateway: Gateway) -> (shutdown: ShutdownSignal, run: GatewayRun) {
        let shutdown = ShutdownSignal()
        return (shutdown, GatewayRun(gateway, shutdown: shutdown))
    }

    var hasReturned: Bool { returned.value }

    /// Waits (for state, with a real-time limit) until `run` returns.
    func waitForReturn(timeout: Duration = .seconds(10)) async throws {
        try await waitUntil(timeout: timeout, "Gateway.run to return") { self.hasReturned }
    }
}

/// A gateway over `sources` and `sinks` with a manual clock and a recording log.
func makeGateway(
    sources: [(String, any SampleSource)], sinks: [(String, QueueConfiguration, any SampleSink)],
    clock: ManualClock, restartPolicy: RestartPolicy = RestartPolicy(),
    shutdownTimeout: Duration = .seconds(10), log: RecordingLogSink = RecordingLogSink()
) -> Gateway {
    Gateway(
        sources: sources.map { ConfiguredSource(name: $0.0, kind: "test-source", source: $0.1) },
        sinks: sinks.map { ConfiguredSink(name: $0.0, kind: "test-sink", queue: $0.1, sink: $0.2) },
        clock: clock, logger: Logger(label: "gateway", sink: log, level: .debug),
        restartPolicy: restartPolicy, shutdownTimeout: shutdownTimeout)
}

/// A gateway of one source named `source` and one sink named `sink` (with `queue`), with a manual
/// clock and a recording log.
func makeGateway(
    source: any SampleSource, sink: any SampleSink, queue: QueueConfiguration = QueueConfiguration(),
    clock: ManualClock, restartPolicy: RestartPolicy = RestartPolicy(),
    shutdownTimeout: Duration = .seconds(10), log: RecordingLogSink = RecordingLogSink()
) -> Gateway {
    makeGateway(
        sources: [("source", source)], sinks: [("sink", queue, sink)], clock: clock, restartPolicy: restartPolicy,
        shutdownTimeout: shutdownTimeout, log: log)
}

/// Starts a gateway of a scripted source and one sink that holds each batch until released,
/// with a manual clock and a recorded log.
func startWithAHoldingSink(
    batchSize: Int = 100, queue: QueueConfiguration = QueueConfiguration(), shutdownTimeout: Duration = .seconds(10)
) -> (
    clock: ManualClock, log: RecordingLogSink, source: ScriptedSource, sink: CollectingSink,
    gateway: Gateway, shutdown: ShutdownSignal, run: GatewayRun
) {
    let clock = ManualClock()
    let log = RecordingLogSink()
    let source = ScriptedSource()
    let sink = CollectingSink(batchSize: batchSize, holdBatches: true)
    let gateway = makeGateway(
        source: source, sink: sink, queue: queue, clock: clock, shutdownTimeout: shutdownTimeout, log: log)
    let (shutdown, run) = GatewayRun.start(gateway)
    return (clock, log, source, sink, gateway, shutdown, run)
}

// MARK: - Configurable test plugins for the catalog

/// A configurable source: `interval` must be positive, `device` is required, `devices` optional.
struct TickSource: SampleSource, ConfigurablePlugin {
    struct DeviceEntry: Decodable, Sendable {
        var address: String
    }

    struct Configuration: PluginConfigurationContract {
        var device: String
        var interval: Double
        var devices: [DeviceEntry]?

        func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> Configuration {
            guard interval > 0 else {
                throw PluginConfigurationError(keyPath: "interval", reason: "must be positive")
            }
            for (index, device) in (devices ?? []).enumerated() where device.address.isEmpty {
                throw PluginConfigurationError(keyPath: "devices[\(index)].address", reason: "must not be empty")
            }
            return self
        }

        static var configurationSchema: ConfigurationSchema {
            .object(
                [
                    ConfigurationProperty("device", .nonEmptyText, "the device"),
                    ConfigurationProperty("interval", .number(0.001...3600, unit: "seconds"), "between ticks"),
                    ConfigurationProperty(
                        "devices",
                        .array(.object([ConfigurationProperty("address", .text, "an address")], required: ["address"])),
                        "more devices"),
                ], required: ["device", "interval"])
        }
    }

    static let kind = "tick"
    static let summary = "ticks for tests"
    let configuration: Configuration
    let name: String

    init(settings: Configuration, environment: PluginEnvironment) {
        self.configuration = settings
        self.name = environment.name
    }

    func run(context: SourceContext) async throws {}
}

/// A configurable sink with a `batchSize` that must be at least 1.
struct BatchSink: SampleSink, ConfigurablePlugin {
    struct Configuration: PluginConfigurationContract {
        var batchSize: Int = 100
        enum CodingKeys: String, CodingKey { case batchSize }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            batchSize = try container.decodeIfPresent(Int.self, forKey: .batchSize) ?? 100
        }

        func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> Configuration { self }

        static var configurationSchema: ConfigurationSchema {
            .object([ConfigurationProperty("batchSize", .whole(1...100_000, unit: "records"), default: 100, "per batch")])
        }
    }

    static let kind = "batch"
    static let summary = "collects batches for tests"
    let configuration: Configuration

    init(settings: Configuration, environment: PluginEnvironment) {
        self.configuration = settings
    }

    func run(inbox: SinkInbox, context: SinkContext) async throws {
        while await inbox.next(maxCount: configuration.batchSize) != nil {}
    }
}

/// A source whose initializer fails with an error that is neither decoding nor configuration.
struct BrokenSource: SampleSource, ConfigurablePlugin {
    struct Configuration: PluginConfigurationContract {
        func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> Configuration { self }
        static var configurationSchema: ConfigurationSchema { .object([]) }
    }
    struct Unavailable: Error, CustomStringConvertible {
        var description: String { "adapter hci0 is powered off" }
    }

    static let kind = "broken"
    static let summary = "fails to start"

    init(settings: Configuration, environment: PluginEnvironment) throws {
        throw Unavailable()
    }

    func run(context: SourceContext) async throws {}
}
