import BLEProfileKit
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
/// again, and they land in the database; over many reconnects no notification is lost.
final class HeartRateSourceOverBlueZTests: XCTestCase {
    /// The source, a collecting sink and the SQLite sink on one bus, running against `bluez`.
    private final class Run: Sendable {
        let sink = CollectingSink(batchSize: 1)
        let storeStatus: StatusReporter
        let database: String
        let tasks: [Task<Void, any Error>]
        let bus: SampleBus

        init(_ bluez: PrivateBlueZ, directory: URL) throws {
            // Real time: reconnects go through the transport, so the backoff is kept short.
            let clock = SystemClock()
            let logs = RecordingLogSink()
            let environment = TestEnvironment.make(name: "hr", clock: clock, directory: directory, logSink: logs)
            // The gateway's Bluetooth reaches the private bus, as the executable's reaches the system bus.
            let bluetooth = bluez.adapters(logs: logs)
            let configuration = HeartRateSourceConfiguration(
                transport: .bluez, adapter: "hci0",
                reconnect: ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)))
            let source = try HeartRateSource(
                settings: configuration.validated(in: environment), environment: environment, bluetooth: bluetooth)
            let board = StatusBoard()
            let status = board.register(name: "hr", kind: HeartRateSource.kind, role: .source)
            let sinkStatus = board.register(name: "collect", kind: "collect", role: .sink)
            storeStatus = board.register(name: "sqlite", kind: SQLiteSink.kind, role: .sink)
            bus = SampleBus(sinks: [
                (name: "collect", queue: QueueConfiguration(), accepts: { _ in true }, status: nil),
                (name: "sqlite", queue: QueueConfiguration(), accepts: { _ in true }, status: storeStatus),
            ])
            database = directory.appendingPathComponent("samples.sqlite").path
            var storeEnvironment = environment
            storeEnvironment.store = try HealthStore(path: database)
            let store = try SQLiteSink(
                settings: .init(batchSize: 500, batchWindow: .milliseconds(10)), environment: storeEnvironment)
            let logger = Logger(label: "hr", sink: logs, level: .debug)
            guard let inbox = bus.subscription(named: "collect")?.inbox,
                let storeInbox = bus.subscription(named: "sqlite")?.inbox
            else { throw XCTSkip("the bus has no inbox for a sink it was built with") }
            let (sink, bus, storeStatus) = (sink, bus, storeStatus)
            tasks = [
                Task { try await sink.run(inbox: inbox, context: SinkContext(logger: logger, clock: clock, status: sinkStatus)) },
                Task { try await store.run(inbox: storeInbox, context: SinkContext(logger: logger, clock: clock, status: storeStatus)) },
                Task {
                    try await source.run(
                        context: SourceContext(
                            publisher: SamplePublisher(bus: bus, status: status), logger: logger, clock: clock, status: status))
                },
            ]
        }

        func stop() {
            tasks[2].cancel()
            bus.finish()
            tasks[0].cancel()
            tasks[1].cancel()
        }

        @Sendable func heartRates() -> [QuantitySample] {
            sink.records.compactMap { record -> QuantitySample? in
                guard case .quantity(let sample) = record, sample.type == .heartRate else { return nil }
                return sample
            }
        }

        /// The heart rates the SQLite store holds, once it committed every one the bus carried.
        func stored() async throws -> [Quantity] {
            try await waitUntil(timeout: .seconds(20), "every sample committed to SQLite") {
                (self.storeStatus.current?.records ?? 0) >= self.heartRates().count
            }
            return try await HealthStore(path: database, access: .readOnly).samples(of: .heartRate).map(\.quantity)
        }
    }

    private func withBlueZ(_ name: String, _ body: (PrivateBlueZ, URL) async throws -> Void) async throws {
        try await PrivateBlueZ.withAdapter(name, body)
    }

    func testMonitorThatDisappearsAndReturnsDeliversSamplesAgain() async throws {
        try await withBlueZ("hr-bluez") { bluez, directory in
            let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:10", name: "Polar H10 TEST")
            let run = try Run(bluez, directory: directory)
            defer { run.stop() }

            // The source discovers, connects and acquires the measurement characteristic.
            try await waitUntil(timeout: .seconds(20), "the source to subscribe") {
                try await bluez.notifyState(PrivateBlueZ.heartRateMeasurement(device)).acquired
            }
            try await bluez.notify(PrivateBlueZ.heartRateMeasurement(device), [0x00, 72])
            try await waitUntil(timeout: .seconds(20), "the first sample") { run.heartRates().count >= 1 }
            let first = try XCTUnwrap(run.heartRates().first)
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
                run.heartRates().contains { (try? $0.quantity.doubleValue(for: .countPerMinute)) == 84 }
            }

            // Both measurements, before and after the monitor came back, are in the SQLite store
            // with their unit and device.
            let stored = try await run.stored()
            XCTAssertEqual(stored, [Quantity(72, .countPerMinute), Quantity(84, .countPerMinute)])
            let devices = try await HealthStore(path: run.database, access: .readOnly).samples(of: .heartRate)
                .compactMap(\.device?.localIdentifier)
            XCTAssertEqual(Set(devices).count, 1, "one device across the reconnect")
        }
    }

    /// Twelve link losses on each notification path, every connection's first value notified
    /// before the source subscribes (bluetoothd re-enabling a cached subscription itself): every
    /// value sent is a stored sample, in order.
    func testNoNotificationIsLostOverManyReconnects() async throws {
        for acquire in [false, true] {
            try await withBlueZ("hr-reconnects") { bluez, directory in
                let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:11", name: "Polar H10 TEST", acquire: acquire)
                let measurement = PrivateBlueZ.heartRateMeasurement(device)
                var sent: [Quantity] = []
                try await bluez.notifyOnConnect(device, uuid: 0x2A37, [0x00, 60])
                let run = try Run(bluez, directory: directory)
                defer { run.stop() }
                for round in 0..<12 {
                    let values = (0..<3).map { UInt8(60 + 3 * round + $0) }
                    sent.append(Quantity(Double(values[0]), .countPerMinute))
                    let expected = sent.count
                    try await waitUntil(timeout: .seconds(20), "connection \(round + 1)'s first value (acquire \(acquire))") {
                        run.heartRates().count == expected
                    }
                    for value in values.dropFirst() {
                        try await bluez.notify(measurement, [0x00, value])
                        sent.append(Quantity(Double(value), .countPerMinute))
                    }
                    let all = sent.count
                    try await waitUntil(timeout: .seconds(20), "connection \(round + 1)'s values (acquire \(acquire))") {
                        run.heartRates().count == all
                    }
                    guard round < 11 else { break }
                    try await bluez.notifyOnConnect(device, uuid: 0x2A37, [0x00, UInt8(63 + 3 * round)])
                    try await bluez.dropLink(device)
                }
                XCTAssertEqual(run.heartRates().map(\.quantity), sent, "acquire \(acquire)")
                let stored = try await run.stored()
                XCTAssertEqual(stored, sent, "acquire \(acquire)")
            }
        }
    }
}
