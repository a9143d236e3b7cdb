public import Foundation
public import HealthModel
public import HealthStore
import GatewayRuntime
public import SampleBus
import XCTest

/// Runs a source against a transport into a ``CollectingSink``, with a ``ManualClock``: the test
/// harness of every source plugin (the heart-rate and fitness plugins give it a
/// ``FakeBLETransport``).
public final class SourceHarness: Sendable {
    public let clock: ManualClock
    public let sink = CollectingSink(batchSize: 1)
    public let logs = RecordingLogSink()
    public let board = StatusBoard()
    public let status: StatusReporter
    public let bus: SampleBus
    public let source: any SampleSource
    public let directory: URL
    /// The source's name in the status board.
    public let name: String

    /// `make` builds the source from the environment the harness made (on `clock`).
    public init(
        name: String, kind: String, clock: ManualClock = ManualClock(), durableCheckpoints: (any SourceCheckpointReader)? = nil,
        make: (PluginEnvironment) throws -> any SampleSource
    ) throws {
        self.clock = clock
        self.name = name
        directory = try TestEnvironment.temporaryDirectory(name)
        status = board.register(name: name, kind: kind, role: .source)
        bus = SampleBus(
            sinks: [(name: "collect", queue: QueueConfiguration(), accepts: { _ in true }, status: nil)],
            checkpoints: CheckpointLedger(durable: durableCheckpoints))
        let environment = TestEnvironment.make(name: name, clock: clock, directory: directory, logSink: logs)
        source = try make(environment)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Runs the source and the sink until `body` returns, then stops both and returns.
    public func run(_ body: @Sendable (SourceHarness) async throws -> Void) async throws {
        let logger = Logger(label: name, sink: logs, level: .debug)
        let context = SourceContext(publisher: SamplePublisher(bus: bus, status: status), logger: logger, clock: clock, status: status)
        let sinkStatus = board.register(name: "collect", kind: "collect", role: .sink)
        guard let inbox = bus.subscription(named: "collect")?.inbox else { return XCTFail("no inbox") }
        let sink = self.sink
        let clock = self.clock
        let sinkTask = Task { try await sink.run(inbox: inbox, context: SinkContext(logger: logger, clock: clock, status: sinkStatus)) }
        let source = self.source
        let sourceTask = Task { try await source.run(context: context) }
        do {
            try await body(self)
        } catch {
            sourceTask.cancel()
            bus.finish()
            sinkTask.cancel()
            throw error
        }
        sourceTask.cancel()
        let outcome = await sourceTask.result
        if case .failure(let error) = outcome, !(error is CancellationError) {
            XCTFail("source ended with \(error)")
        }
        bus.finish()
        _ = await sinkTask.result
    }

    public var quantities: [QuantitySample] {
        sink.records.compactMap { if case .quantity(let sample) = $0 { sample } else { nil } }
    }

    /// Every heartbeat series record published, provisional versions included, in order.
    public var seriesVersions: [HeartbeatSeriesSample] {
        sink.records.compactMap { if case .heartbeatSeries(let series) = $0 { series } else { nil } }
    }

    /// The series as a store keeps them: of the versions sharing a uuid, only the highest sync
    /// version, at the place of its first version.
    public var series: [HeartbeatSeriesSample] {
        var latest: [SampleID: HeartbeatSeriesSample] = [:]
        var order: [SampleID] = []
        for series in seriesVersions {
            let key = series.id
            if latest[key] == nil { order.append(key) }
            if (series.metadata.syncVersion ?? 0) >= (latest[key]?.metadata.syncVersion ?? 0) { latest[key] = series }
        }
        return order.compactMap { latest[$0] }
    }

    public func quantities(_ type: QuantityType) -> [QuantitySample] { quantities.filter { $0.type == type } }

    public var current: PluginStatus { board.status(of: name) ?? PluginStatus(name: name, kind: "", role: .source) }

    public func waitFor(_ what: String, _ condition: @Sendable () -> Bool) async throws {
        try await waitUntil(timeout: .seconds(20), what) { condition() }
    }
}
