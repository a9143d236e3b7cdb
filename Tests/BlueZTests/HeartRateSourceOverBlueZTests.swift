import BLECentral
import BlueZ
import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import HeartRateMonitor
import SQLiteStore
import GatewayRuntime
import SampleBus
import XCTest

/// The whole `ble-heart-rate` source over the BlueZ transport and a real private bus, into a
/// CollectingSink and the SQLite store: a monitor that disappears and comes back delivers samples
/// again, and they land in the database.
final class HeartRateSourceOverBlueZTests: XCTestCase {
    func testMonitorThatDisappearsAndReturnsDeliversSamplesAgain() async throws {
        let bluez = try await PrivateBlueZ()
        let directory = try TestEnvironment.temporaryDirectory("hr-bluez")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try await bluez.addAdapter()
            let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:10", name: "Polar H10 TEST")

            // Real time: reconnects go through the transport, so the backoff is kept short.
            let clock = SystemClock()
            let logs = RecordingLogSink()
            var environment = TestEnvironment.make(name: "hr", clock: clock, directory: directory, logSink: logs)
            environment.bluetooth = bluez.adapters(logs: logs)
            let configuration = HeartRateSourceConfiguration(
                transport: .bluez, adapter: "hci0",
                reconnect: ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)))
            // The gateway's Bluetooth reaches the private bus, as the executable's reaches the system bus.
            let source = try HeartRateSource(settings: configuration.validated(in: environment), environment: environment)

            let board = StatusBoard()
            let status = board.register(name: "hr", kind: HeartRateSource.kind, role: .source)
            let sinkStatus = board.register(name: "collect", kind: "collect", role: .sink)
            let storeStatus = board.register(name: "sqlite", kind: SQLiteSink.kind, role: .sink)
            let bus = SampleBus(sinks: [
                (name: "collect", queue: QueueConfiguration(), accepts: { _ in true }, status: nil),
                (name: "sqlite", queue: QueueConfiguration(), accepts: { _ in true }, status: storeStatus),
            ])
            let sink = CollectingSink(batchSize: 1)
            let database = directory.appendingPathComponent("samples.sqlite").path
            var storeEnvironment = environment
            storeEnvironment.store = try HealthStore(path: database)
            let store = try SQLiteSink(
                settings: .init(batchSize: 500, batchWindow: .milliseconds(10)), environment: storeEnvironment)
            let logger = Logger(label: "hr", sink: logs, level: .debug)
            guard let inbox = bus.subscription(named: "collect")?.inbox else { return XCTFail("no inbox") }
            let sinkTask = Task {
                try await sink.run(inbox: inbox, context: SinkContext(logger: logger, clock: clock, status: sinkStatus))
            }
            guard let storeInbox = bus.subscription(named: "sqlite")?.inbox else { return XCTFail("no store inbox") }
            let storeTask = Task {
                try await store.run(inbox: storeInbox, context: SinkContext(logger: logger, clock: clock, status: storeStatus))
            }
            let sourceTask = Task {
                try await source.run(
                    context: SourceContext(
                        publisher: SamplePublisher(bus: bus, status: status), logger: logger, clock: clock, status: status))
            }
            defer {
                sourceTask.cancel()
                bus.finish()
                sinkTask.cancel()
                storeTask.cancel()
            }
            @Sendable func heartRates() -> [QuantitySample] {
                sink.records.compactMap { record -> QuantitySample? in
                    guard case .quantity(let sample) = record, sample.type == .heartRate else { return nil }
                    return sample
                }
            }

            // The source discovers, connects and acquires the measurement characteristic.
            try await waitUntil(timeout: .seconds(20), "the source to subscribe") {
                try await bluez.notifyState(PrivateBlueZ.heartRateMeasurement(device)).acquired
            }
            try await bluez.notify(PrivateBlueZ.heartRateMeasurement(device), [0x00, 72])
            try await waitUntil(timeout: .seconds(20), "the first sample") { heartRates().count >= 1 }
            let first = try XCTUnwrap(heartRates().first)
            XCTAssertEqual(try first.quantity.doubleValue(for: .countPerMinute), 72)
            XCTAssertTrue(
                [first.device?.localIdentifier, first.device?.name].contains { $0?.contains("AA:BB:CC:DD:EE:10") == true || $0 == "Polar H10 TEST" },
                "\(String(describing: first.device))")

            // The monitor goes away (out of range, battery out) and comes back.
            try await bluez.removeMonitor(device)
            let returned = try await bluez.addMonitor("AA:BB:CC:DD:EE:10", name: "Polar H10 TEST")
            try await waitUntil(timeout: .seconds(20), "the source to subscribe again") {
                try await bluez.notifyState(PrivateBlueZ.heartRateMeasurement(returned)).acquired
            }
            try await bluez.notify(PrivateBlueZ.heartRateMeasurement(returned), [0x00, 84])
            try await waitUntil(timeout: .seconds(20), "a sample after the return") {
                heartRates().contains { (try? $0.quantity.doubleValue(for: .countPerMinute)) == 84 }
            }

            // Both measurements, before and after the monitor came back, are in the SQLite store
            // with their unit and device.
            try await waitUntil(timeout: .seconds(20), "both samples committed to SQLite") {
                (storeStatus.current?.records ?? 0) >= heartRates().count
            }
            let stored = try await HealthStore(path: database, access: .readOnly).samples(of: .heartRate)
            XCTAssertEqual(stored.map(\.quantity), [Quantity(72, .countPerMinute), Quantity(84, .countPerMinute)])
            XCTAssertEqual(Set(stored.compactMap(\.device?.localIdentifier)).count, 1, "one device across the reconnect")
        } catch {
            await bluez.stop()
            throw error
        }
        await bluez.stop()
    }
}
