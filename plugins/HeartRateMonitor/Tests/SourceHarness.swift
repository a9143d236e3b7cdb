import BLECentral
import Foundation
import GatewayTesting
import HealthModel
import HeartRateMonitor
import SampleBus
import XCTest

/// Runs a HeartRateSource against a transport into a CollectingSink, with a ManualClock.
final class SourceHarness: Sendable {
    let clock: ManualClock
    let sink = CollectingSink(batchSize: 1)
    let logs = RecordingLogSink()
    let board = StatusBoard()
    let status: StatusReporter
    let bus: SampleBus
    let source: HeartRateSource
    let directory: URL

    /// Runs the source against `transport`, on the transport's clock (the one it stamps
    /// notifications with).
    convenience init(configuration: HeartRateSourceConfiguration = HeartRateSourceConfiguration(), transport: FakeBLETransport) throws {
        try self.init(configuration: configuration, clock: transport.clock) { _ in transport }
    }

    /// `transport` gets the harness's clock (for transports that pace themselves on it).
    init(
        configuration: HeartRateSourceConfiguration, clock: ManualClock = ManualClock(),
        transport: (ManualClock) -> any BLECentralTransport
    ) throws {
        self.clock = clock
        directory = try TestEnvironment.temporaryDirectory("ble")
        status = board.register(name: "hr", kind: HeartRateSource.kind, role: .source)
        bus = SampleBus(sinks: [(name: "collect", queue: QueueConfiguration(), accepts: { _ in true }, status: nil)])
        let environment = TestEnvironment.make(name: "hr", clock: clock, directory: directory, logSink: logs)
        source = try HeartRateSource(configuration: configuration, environment: environment, transport: transport(clock))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Runs the source and the sink until `body` returns, then stops both and returns.
    func run(_ body: @Sendable (SourceHarness) async throws -> Void) async throws {
        let logger = Logger(label: "hr", sink: logs, level: .debug)
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

    var quantities: [QuantitySample] {
        sink.records.compactMap { if case .quantity(let sample) = $0 { sample } else { nil } }
    }

    /// Every heartbeat series record published, provisional versions included, in order.
    var seriesVersions: [HeartbeatSeriesSample] {
        sink.records.compactMap { if case .heartbeatSeries(let series) = $0 { series } else { nil } }
    }

    /// The series as a store keeps them: of the versions sharing a uuid, only the highest sync
    /// version, at the place of its first version.
    var series: [HeartbeatSeriesSample] {
        var latest: [SampleID: HeartbeatSeriesSample] = [:]
        var order: [SampleID] = []
        for series in seriesVersions {
            let key = series.id
            if latest[key] == nil { order.append(key) }
            if (series.metadata.syncVersion ?? 0) >= (latest[key]?.metadata.syncVersion ?? 0) { latest[key] = series }
        }
        return order.compactMap { latest[$0] }
    }

    func quantities(_ type: QuantityType) -> [QuantitySample] { quantities.filter { $0.type == type } }

    var current: PluginStatus { board.status(of: "hr") ?? PluginStatus(name: "hr", kind: "", role: .source) }

    func waitFor(_ what: String, _ condition: @Sendable () -> Bool) async throws {
        try await waitUntil(timeout: .seconds(20), what) { condition() }
    }
}
