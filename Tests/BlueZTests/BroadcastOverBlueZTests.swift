import BLETransport
import BlueZ
import BroadcastDevices
import DBus
import Foundation
import GatewayRuntime
import GatewayTesting
import HealthModel
import HealthStore
import SQLiteStore
import SampleBus
import XCTest

/// The broadcast sources over BlueZ discovery and BlueZ's Advertisement Monitor on a private bus (dbusmock's bluez5 template and
/// Tests/Fixtures/bluez_gatt.py's Advertise), into the SQLite store.
final class BroadcastOverBlueZTests: XCTestCase {
    /// A source and the SQLite sink on one bus, with the store's checkpoints read back.
    private final class Run: Sendable {
        let storeStatus: StatusReporter
        let status: StatusReporter
        let board = StatusBoard()
        let database: String
        let tasks: [Task<Void, any Error>]
        let bus: SampleBus

        init(_ bluez: PrivateBlueZ, directory: URL, make: (PluginEnvironment, BluetoothAdapters) throws -> any SampleSource) throws {
            let clock = SystemClock()
            let logs = RecordingLogSink()
            let environment = TestEnvironment.make(name: "adv", clock: clock, directory: directory, logSink: logs)
            let source = try make(environment, bluez.adapters(logs: logs))
            status = board.register(name: "adv", kind: "adv", role: .source)
            storeStatus = board.register(name: "sqlite", kind: SQLiteSink.kind, role: .sink)
            database = directory.appendingPathComponent("samples.sqlite").path
            var storeEnvironment = environment
            let store = try HealthStore(path: database)
            storeEnvironment.store = store
            let sink = try SQLiteSink(settings: .init(batchSize: 500, batchWindow: .milliseconds(10)), environment: storeEnvironment)
            bus = SampleBus(
                sinks: [(name: "sqlite", queue: QueueConfiguration(), accepts: { _ in true }, status: storeStatus)],
                storesCheckpoints: [true], checkpoints: CheckpointLedger(durable: sink.checkpointReader))
            let logger = Logger(label: "adv", sink: logs, level: .debug)
            guard let inbox = bus.subscription(named: "sqlite")?.inbox else { throw XCTSkip("no inbox") }
            let (bus, status, storeStatus) = (bus, status, storeStatus)
            tasks = [
                Task { try await sink.run(inbox: inbox, context: SinkContext(logger: logger, clock: clock, status: storeStatus)) },
                Task {
                    try await source.run(
                        context: SourceContext(publisher: SamplePublisher(bus: bus, status: status), logger: logger, clock: clock, status: status))
                },
            ]
        }

        /// Stops the source, lets the store drain, and waits for both.
        func stop() async {
            tasks[1].cancel()
            _ = await tasks[1].result
            bus.finish()
            _ = await tasks[0].result
        }

        func stored(_ type: QuantityType) async throws -> [QuantitySample] {
            try await HealthStore(path: database, access: .readOnly).samples(of: type)
        }
    }

    private func withBlueZ(_ name: String, _ body: (PrivateBlueZ, URL) async throws -> Void) async throws {
        try await PrivateBlueZ.withAdapter(name, body)
    }

    /// The Polar broadcast source on `bluez`'s adapter, storing into `directory`, running.
    private func polarRun(_ bluez: PrivateBlueZ, directory: URL) throws -> Run {
        let settings = try settings()
        return try Run(bluez, directory: directory) { environment, bluetooth in
            PolarBroadcastSource(settings: settings, environment: environment, bluetooth: bluetooth)
        }
    }

    /// Waits until bluetoothd has activated the source's advertisement monitor.
    private func waitForMonitorActivation(_ bluez: PrivateBlueZ) async throws {
        try await waitUntil(timeout: .seconds(20), "the monitor activated") {
            try await bluez.monitorEvents().events.contains("Activate")
        }
    }

    /// Advertises six changes of the strap, counters 0, 1, 1 (a repeat), 2, 3, 4 with heart rates 80
    /// to 85, and waits until the five new values are stored.
    private func advertiseSixChanges(_ bluez: PrivateBlueZ, run: Run) async throws {
        let counters: [UInt8] = [0, 1, 1, 2, 3, 4]
        for (index, counter) in counters.enumerated() {
            try await bluez.advertise(
                "A0:9E:1A:12:34:56", name: "Polar H10 1A2B3C4D",
                manufacturer: [0x006B: [0x03 | counter << 2, 0x00, 90 + UInt8(index), 80 + UInt8(index)]])
        }
        try await waitUntil(timeout: .seconds(20), "five heart rates stored") {
            (run.storeStatus.current?.records ?? 0) >= 5
        }
    }

    /// Advertises the strap's frames with `counters` (each a new value: 70 + counter bpm) and
    /// waits until three heart rates are stored.
    private func advertiseUntilThreeStored(_ bluez: PrivateBlueZ, counters: Range<UInt8>, run: Run) async throws {
        for counter in counters {
            try await bluez.advertise(
                "A0:9E:1A:12:34:56", name: "Polar H10 1A2B3C4D",
                manufacturer: [0x006B: [0x03 | counter << 2, 0x00, 90, 70 + counter]])
        }
        try await waitUntil(timeout: .seconds(20), "three heart rates stored") {
            (run.storeStatus.current?.records ?? 0) >= 3
        }
    }

    private func settings() throws -> BroadcastSourceSettings {
        var configuration = BroadcastSourceConfiguration()
        configuration.adapter = "hci0"
        return try configuration.validated(in: TestEnvironment.make(directory: FileManager.default.temporaryDirectory))
    }

    /// Each changed advertisement of a strap is one sample when its counter advanced; a repeat
    /// (same counter) is none. The discovery filter asks for duplicates, LE only.
    func testPolarStrapByDiscovery() async throws {
        try await withBlueZ("polar-bluez") { bluez, directory in
            let run = try polarRun(bluez, directory: directory)
            try await waitUntil(timeout: .seconds(20), "the scan to start") {
                (try? await bluez.discoveryFilter())?["DuplicateData"]?.bool == true
            }
            let filter = try await bluez.discoveryFilter()
            XCTAssertEqual(filter["Transport"]?.string, "le")
            try await advertiseSixChanges(bluez, run: run)
            await run.stop()
            let stored = try await run.stored(.heartRate)
            XCTAssertEqual(try stored.map { try $0.quantity.doubleValue(for: .countPerMinute) }, [80, 81, 83, 84, 85])
            XCTAssertEqual(Set(stored.compactMap(\.device?.localIdentifier)), ["1A2B3C4D"])
            XCTAssertEqual(stored.first?.metadata[.sensorContact], .bool(true))
            XCTAssertEqual(run.status.current?.details["scanPath"], "discovery")
        }
    }

    /// With bluetoothd's Advertisement Monitor offered (-E), the strap is heard through a monitor
    /// of Polar's manufacturer data and no discovery: bluetoothd reads the application before it
    /// answers RegisterMonitor (a scan that blocked its connection while waiting would never be
    /// registered), activates it, and the monitor is released and unregistered before the source
    /// returns.
    func testPolarStrapByAdvertisementMonitor() async throws {
        try await withBlueZ("polar-monitor") { bluez, directory in
            try await bluez.offerAdvertisementMonitor()
            let run = try polarRun(bluez, directory: directory)
            try await waitForMonitorActivation(bluez)
            let registered = try await bluez.monitorEvents()
            XCTAssertEqual(registered.registered, 1)
            XCTAssertEqual(Array(registered.events.prefix(3)), ["GetManagedObjects", "registered ff:6b00", "Activate"])
            let discovering = try await bluez.discovering()
            XCTAssertFalse(discovering, "the monitor path scans passively, without discovery")
            // A scale is not selected by the strap source's monitor, so bluetoothd reports nothing of it.
            try await bluez.advertise("C8:47:8C:01:02:03", name: "MIBFS", service: [0x181D: [0x22, 0x9C, 0x3E]])
            try await advertiseSixChanges(bluez, run: run)
            XCTAssertEqual(run.status.current?.details["scanPath"], "advertisement-monitor")
            await run.stop()
            let stored = try await run.stored(.heartRate)
            XCTAssertEqual(try stored.map { try $0.quantity.doubleValue(for: .countPerMinute) }, [80, 81, 83, 84, 85])
            // The source returned only once the monitor was unregistered (a scoped scan).
            let after = try await bluez.monitorEvents()
            XCTAssertEqual(after.registered, 0)
            let ended = after.events
            // Once for six advertisements: the monitor declares RSSI thresholds, without which
            // bluetoothd 5.66 (and the fixture) calls DeviceFound on every advertisement.
            XCTAssertEqual(ended.filter { $0.hasPrefix("DeviceFound") }, ["DeviceFound A0:9E:1A:12:34:56"])
            XCTAssertEqual(Array(ended.suffix(2)), ["Release", "unregistered"])
            let notDiscovering = try await bluez.discovering()
            XCTAssertFalse(notDiscovering)
        }
    }

    /// A monitor manager that refuses the registration leaves the scan on discovery, which the
    /// status says.
    func testRefusedMonitorFallsBackToDiscovery() async throws {
        try await withBlueZ("polar-refused") { bluez, directory in
            try await bluez.offerAdvertisementMonitor(refuse: true)
            let run = try polarRun(bluez, directory: directory)
            try await waitUntil(timeout: .seconds(20), "discovery started") { try await bluez.discovering() }
            try await advertiseUntilThreeStored(bluez, counters: 0..<3, run: run)
            XCTAssertEqual(run.status.current?.details["scanPath"], "discovery")
            await run.stop()
            let monitor = try await bluez.monitorEvents()
            XCTAssertEqual(monitor.registered, 0)
            XCTAssertEqual(monitor.events, ["GetManagedObjects", "refused"])
        }
    }

    /// A monitor bluetoothd releases on its own (a kernel that refused its patterns) leaves the
    /// scan going on by discovery, and the status follows.
    func testReleasedMonitorFallsBackToDiscovery() async throws {
        try await withBlueZ("polar-released") { bluez, directory in
            try await bluez.offerAdvertisementMonitor()
            let run = try polarRun(bluez, directory: directory)
            try await waitForMonitorActivation(bluez)
            try await bluez.advertise(
                "A0:9E:1A:12:34:56", name: "Polar H10 1A2B3C4D", manufacturer: [0x006B: [0x03, 0x00, 90, 70]])
            try await waitUntil(timeout: .seconds(20), "a heart rate by the monitor") {
                (run.storeStatus.current?.records ?? 0) >= 1 && run.status.current?.details["scanPath"] == "advertisement-monitor"
            }
            try await bluez.releaseMonitors()
            try await waitUntil(timeout: .seconds(20), "discovery started") { try await bluez.discovering() }
            try await advertiseUntilThreeStored(bluez, counters: 1..<3, run: run)
            XCTAssertEqual(run.status.current?.details["scanPath"], "discovery")
            await run.stop()
            let stored = try await run.stored(.heartRate)
            XCTAssertEqual(try stored.map { try $0.quantity.doubleValue(for: .countPerMinute) }, [70, 71, 72])
            let stillDiscovering = try await bluez.discovering()
            XCTAssertFalse(stillDiscovering, "the discovery started after the release is stopped with the scan")
        }
    }

    /// A weighing repeated in many advertisements is stored once, and not again after a restart
    /// that hears its repeats (the ledger is the checkpoint committed with the sample).
    func testScaleWeighingOnceAcrossARestart() async throws {
        try await withBlueZ("scale-bluez") { bluez, directory in
            let settings = try settings()
            // xiaomi-ble's test_Xiaomi_Scale2 payload (tests/test_parser.py): 85.15 kg, 428 ohms, stabilised.
            let weighing: [UInt8] = [0x02, 0x26, 0xB2, 0x07, 0x05, 0x04, 0x0F, 0x02, 0x01, 0xAC, 0x01, 0x86, 0x42]
            var removed = weighing
            removed[1] |= 0x80
            for round in 0..<2 {
                let run = try Run(bluez, directory: directory) { environment, bluetooth in
                    MiScaleSource(settings: settings, environment: environment, bluetooth: bluetooth)
                }
                // A second weighing, heard only by the second run.
                var next = weighing
                next[7] = 0x03
                next[11] = 0x90
                let payloads = round == 0 ? [weighing, removed] : [weighing, removed, next]
                // Advertised until the round stored something (the scan may start after the first
                // advertisements, as a real scan starts after the scale woke up).
                try await waitUntil(timeout: .seconds(20), "round \(round)'s weighing stored") {
                    for payload in payloads {
                        try await bluez.advertise("C8:47:8C:01:02:03", name: "MIBFS", service: [0x181B: payload])
                    }
                    return (run.storeStatus.current?.records ?? 0) >= 1
                }
                await run.stop()
            }
            let stored = try await HealthStore(path: directory.appendingPathComponent("samples.sqlite").path, access: .readOnly)
                .samples(of: .bodyMass)
            XCTAssertEqual(try stored.map { try $0.quantity.doubleValue(for: .kilogram) }, [85.15, 85.2])
            XCTAssertEqual(stored.first?.metadata[.impedance], .integer(428))
        }
    }
}
