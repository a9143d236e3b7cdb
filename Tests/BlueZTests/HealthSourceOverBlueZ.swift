import BLEProfileKit
import Foundation
import GatewayTesting
import HealthDevices
import HealthModel
import GatewayRuntime
import SampleBus
import XCTest

/// A `ble-health` source over the BlueZ transport on a private bus, feeding a collecting sink:
/// what the glucose and pairing tests share.
struct HealthSourceOverBlueZ: Sendable {
    let sink: CollectingSink
    let logs: RecordingLogSink
    let board: StatusBoard

    /// The glucose samples collected so far, in arrival order.
    func glucose() -> [QuantitySample] {
        sink.records.compactMap { record -> QuantitySample? in
            guard case .quantity(let sample) = record, sample.type == .bloodGlucose else { return nil }
            return sample
        }
    }

    /// Runs the source with `configuration` (transport BlueZ, on `bluez`'s bus) while `body`
    /// runs, then stops it.
    static func run(
        on bluez: PrivateBlueZ, configuration: HealthDeviceConfiguration, _ body: (HealthSourceOverBlueZ) async throws -> Void
    ) async throws {
        let directory = try TestEnvironment.temporaryDirectory("health-over-bluez")
        defer { try? FileManager.default.removeItem(at: directory) }
        let logs = RecordingLogSink()
        let clock = SystemClock()
        let environment = TestEnvironment.make(name: "health", clock: clock, directory: directory, logSink: logs)
        let source = try HealthDeviceSource(
            settings: configuration.validated(in: environment), environment: environment, bluetooth: bluez.adapters(logs: logs))
        let bus = SampleBus(sinks: [(name: "collect", queue: QueueConfiguration(), accepts: { _ in true }, status: nil)])
        let sink = CollectingSink(batchSize: 1)
        let board = StatusBoard()
        let status = board.register(name: "health", kind: HealthDeviceSource.kind, role: .source)
        let logger = Logger(label: "health", sink: logs, level: .debug)
        guard let inbox = bus.subscription(named: "collect")?.inbox else { return XCTFail("no inbox") }
        let sinkTask = Task {
            try await sink.run(
                inbox: inbox, context: SinkContext(logger: logger, clock: clock, status: board.register(name: "c", kind: "c", role: .sink)))
        }
        let sourceTask = Task {
            try await source.run(
                context: SourceContext(publisher: SamplePublisher(bus: bus, status: status), logger: logger, clock: clock, status: status))
        }
        defer {
            sourceTask.cancel()
            bus.finish()
            sinkTask.cancel()
        }
        try await body(HealthSourceOverBlueZ(sink: sink, logs: logs, board: board))
    }
}
