import BLETransport
import BLEProfileKit
import BlueZ
import DBus
import Foundation
import GatewayTesting
import HealthModel
import HeartRateMonitor
import GatewayRuntime
import SampleBus
import Synchronization
import XCTest

/// The adapter's connection scheduler over the BlueZ transport and a private bus with the mocked
/// bluetoothd: a slot budget shared by two sources, and the watchdog that power-cycles an
/// adapter answering InProgress again and again.
final class AdapterSchedulerOverBlueZTests: XCTestCase {
    /// Runs `sources` (made from one shared environment) until `body` returns.
    private func run(
        _ sources: [(name: String, source: any SampleSource)], logs: RecordingLogSink, board: StatusBoard,
        _ body: () async throws -> Void
    ) async throws {
        let bus = SampleBus(sinks: [(name: "collect", queue: QueueConfiguration(), accepts: { _ in true }, status: nil)])
        let sink = CollectingSink(batchSize: 1)
        let clock = SystemClock()
        let logger = Logger(label: "test", sink: logs, level: .debug)
        guard let inbox = bus.subscription(named: "collect")?.inbox else { return XCTFail("no inbox") }
        let sinkStatus = board.register(name: "collect", kind: "collect", role: .sink)
        let sinkTask = Task { try await sink.run(inbox: inbox, context: SinkContext(logger: logger, clock: clock, status: sinkStatus)) }
        var tasks: [Task<Void, any Error>] = []
        for (name, source) in sources {
            let status = board.register(name: name, kind: HeartRateSource.kind, role: .source)
            let context = SourceContext(
                publisher: SamplePublisher(bus: bus, status: status), logger: logger.child(name), clock: clock, status: status)
            tasks.append(Task { try await source.run(context: context) })
        }
        defer {
            for task in tasks { task.cancel() }
            bus.finish()
            sinkTask.cancel()
        }
        try await body()
    }

    /// Two sources on hci0 share its two device slots: of three monitors, two are followed and
    /// connected, whichever source asked first, and the third waits for a slot with one notice
    /// naming the limit, never connected.
    func testTwoSourcesShareTheAdaptersDeviceSlots() async throws {
        let bluez = try await PrivateBlueZ()
        let directory = try TestEnvironment.temporaryDirectory("slots")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try await bluez.addAdapter()
            var added: [String] = []
            for number in 1...3 { added.append(try await bluez.addMonitor("AA:BB:CC:DD:EE:0\(number)", name: "Strap \(number)")) }
            let devices = added
            let logs = RecordingLogSink()
            // The gateway's adapters, as the executable makes them from `bluetooth.adapterLimits`.
            let bluetooth = bluez.adapters(limits: AdapterScheduler.Limits(connections: 2), logs: logs)
            func source(_ name: String, _ addresses: [String]) throws -> any SampleSource {
                let environment = TestEnvironment.make(
                    name: name, clock: SystemClock(), directory: directory, logSink: logs)
                return try HeartRateSource(
                    settings: HeartRateSourceConfiguration(
                        transport: .bluez, adapter: "hci0",
                        devices: .matching(addresses.map { .address($0) }), maxDevices: 3)
    .validated(in: environment),
                    environment: environment, bluetooth: bluetooth)
            }
            let board = StatusBoard()
            try await run(
                [("a", try source("a", ["AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:02"])), ("b", try source("b", ["AA:BB:CC:DD:EE:03"]))],
                logs: logs, board: board
            ) {
                try await waitUntil(timeout: .seconds(30), "two monitors subscribed and the third refused") {
                    var acquired = 0
                    for device in devices where try await bluez.notifyState(PrivateBlueZ.heartRateMeasurement(device)).acquired {
                        acquired += 1
                    }
                    return acquired == 2 && logs.entries.contains { $0.message.contains("it is followed when a slot comes free") }
                }
                // Time for a wrong third connection to show.
                try await Task.sleep(for: .milliseconds(500))
                var attempts: [Int] = []
                for device in devices { attempts.append(try await bluez.connectAttempts(device)) }
                XCTAssertEqual(attempts.sorted(), [0, 1, 1], "connection attempts per monitor")
                let statuses = ["a", "b"].compactMap { board.status(of: $0)?.details["adapter.hci0"] }
                XCTAssertTrue(statuses.contains { $0.hasPrefix("2/2 devices, 2 links") }, "\(statuses)")
            }
            let refusals = logs.entries.filter {
                $0.message.contains("the adapter that hears it is full (hci0 2/2 device slots, bluetooth.adapterLimits.connections)")
            }
            XCTAssertEqual(refusals.count, 1, "\(logs.entries.map(\.message))")
        } catch {
            await bluez.stop()
            throw error
        }
        await bluez.stop()
    }

    /// An adapter that answers InProgress to five connection attempts in a row is power-cycled
    /// once through Adapter1.Powered (off, then on), which is logged and counted in the status;
    /// the next attempt connects and samples flow.
    func testRepeatedInProgressPowerCyclesTheAdapterOnce() async throws {
        let bluez = try await PrivateBlueZ()
        let directory = try TestEnvironment.temporaryDirectory("wedged")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try await bluez.addAdapter()
            let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:11", name: "Strap")
            for _ in 1...5 { try await bluez.failNextConnect(device, error: "org.bluez.Error.InProgress") }
            // Every Powered change of hci0, as bluetoothd's clients see it.
            let powered = Mutex<[Bool]>([])
            let signals = try await BlueZClient(connection: bluez.connection).signals()
            let watcher = Task {
                for try await signal in signals where signal.path == "/org/bluez/hci0" {
                    if let change = signal.propertiesChanged, let value = change.changed["Powered"]?.bool {
                        powered.withLock { $0.append(value) }
                    }
                }
            }
            defer { watcher.cancel() }
            let logs = RecordingLogSink()
            let environment = TestEnvironment.make(
                name: "hr", clock: SystemClock(), directory: directory, logSink: logs)
            let bluetooth = bluez.adapters(limits: AdapterScheduler.Limits(inProgressLimit: 5), logs: logs)
            let source = try HeartRateSource(
                settings: HeartRateSourceConfiguration(
                    transport: .bluez, adapter: "hci0",
                    reconnect: ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100)))
    .validated(in: environment),
                environment: environment, bluetooth: bluetooth)
            let board = StatusBoard()
            try await run([("hr", source)], logs: logs, board: board) {
                try await waitUntil(timeout: .seconds(30), "the source to subscribe after the power cycle") {
                    try await bluez.notifyState(PrivateBlueZ.heartRateMeasurement(device)).acquired
                }
                try await waitUntil(timeout: .seconds(10), "Powered off and on") { powered.withLock { $0 } == [false, true] }
            }
            let attempts = try await bluez.connectAttempts(device)
            XCTAssertEqual(attempts, 6)
            let wedged = logs.entries.filter { $0.message.contains("adapter hci0 looks wedged (5 InProgress answers in a row)") }
            XCTAssertEqual(wedged.count, 1, "\(logs.entries.map(\.message))")
            XCTAssertTrue(logs.entries.contains { $0.message.contains("adapter hci0 was power-cycled") })
            let summary = board.status(of: "hr")?.details["adapter.hci0"] ?? ""
            XCTAssertTrue(summary.hasSuffix("1 power cycle"), summary)
        } catch {
            await bluez.stop()
            throw error
        }
        await bluez.stop()
    }

    /// One source on two adapters with one device slot each: two monitors that both adapters
    /// see are followed one per adapter, and each connects through the adapter that took it.
    func testDevicesSpreadOverTwoAdaptersByTheirSlots() async throws {
        try await spreadOverTwoAdapters(source: ["hci0", "hci1"], gateway: nil)
    }

    /// The same with the source naming no adapter and the gateway's `bluetooth.adapters` being
    /// `all`: the source lists BlueZ's adapters when it starts and uses both.
    func testTheGatewaysAllAdaptersSpreadASourceThatNamesNone() async throws {
        try await spreadOverTwoAdapters(source: nil, gateway: .all)
    }

    private func spreadOverTwoAdapters(source adapters: AdapterSelection?, gateway: AdapterSelection?) async throws {
        let bluez = try await PrivateBlueZ()
        let directory = try TestEnvironment.temporaryDirectory("adapters")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try await bluez.addAdapter("hci0")
            try await bluez.addAdapter("hci1")
            var added: [String: String] = [:]
            for adapter in ["hci0", "hci1"] {
                for number in 1...2 {
                    added["\(adapter)/\(number)"] = try await bluez.addMonitor(
                        "AA:BB:CC:DD:EE:2\(number)", name: "Strap \(number)", adapter: adapter)
                }
            }
            let devices = added
            let logs = RecordingLogSink()
            let environment = TestEnvironment.make(
                name: "hr", clock: SystemClock(), directory: directory, logSink: logs)
            let bluetooth = bluez.adapters(limits: AdapterScheduler.Limits(connections: 1), adapters: gateway, logs: logs)
            let source = try HeartRateSource(
                settings: HeartRateSourceConfiguration(
                    transport: .bluez, adapters: adapters,
                    maxDevices: 2)
    .validated(in: environment),
                environment: environment, bluetooth: bluetooth)
            let board = StatusBoard()
            try await run([("hr", source)], logs: logs, board: board) {
                try await waitUntil(timeout: .seconds(30), "both monitors subscribed") {
                    var subscribed = Set<String>()
                    for (key, device) in devices where try await bluez.notifyState(PrivateBlueZ.heartRateMeasurement(device)).acquired {
                        subscribed.insert(key)
                    }
                    return subscribed.count == 2
                }
                try await waitUntil(timeout: .seconds(10), "each adapter's status shows its one device and link") {
                    let details = board.status(of: "hr")?.details ?? [:]
                    return ["adapter.hci0", "adapter.hci1"].allSatisfy { details[$0]?.hasPrefix("1/1 devices, 1 link,") == true }
                }
            }
            var used: [String: Int] = [:]
            var connectedMonitors = Set<String>()
            for (key, device) in devices {
                let attempts = try await bluez.connectAttempts(device)
                guard attempts > 0 else { continue }
                let parts = key.split(separator: "/")
                used[String(parts[0]), default: 0] += attempts
                connectedMonitors.insert(String(parts[1]))
            }
            XCTAssertEqual(used, ["hci0": 1, "hci1": 1], "one monitor per adapter")
            XCTAssertEqual(connectedMonitors, ["1", "2"], "both monitors")
        } catch {
            await bluez.stop()
            throw error
        }
        await bluez.stop()
    }
}
