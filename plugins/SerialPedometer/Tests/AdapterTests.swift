import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import LinuxSystem
import GatewayRuntime
import SampleBus
import SerialDevices
import SerialPedometer
import SQLiteStore
import Synchronization
import XCTest

/// The whole adapter against real pty pairs: the gateway opens the slave through a symlink (as
/// it would open /dev/healthgate/…), the test plays the device on the master.
final class AdapterTests: TemporaryDirectoryTestCase {
    override class var directoryPrefix: String { "serial-pedometer" }

    /// A running gateway with one serial-pedometer source and a collecting sink.
    struct Harness {
        let gateway: Gateway
        let sink: CollectingSink
        let shutdown: ShutdownSignal
        let task: Task<Void, Never>
        let logs: RecordingLogSink

        var status: PluginStatus? { gateway.statusBoard.status(of: "pedo") }

        func detail(_ key: String) -> String? { status?.details[key] }

        var steps: Double {
            sink.records.reduce(0) { total, record in
                guard case .quantity(let sample) = record, sample.type == .stepCount else { return total }
                return total + sample.quantity.value
            }
        }

        var stepSamples: [QuantitySample] {
            sink.records.compactMap { record in
                guard case .quantity(let sample) = record, sample.type == .stepCount else { return nil }
                return sample
            }
        }

        func stop() async {
            shutdown.requestStop()
            await task.value
        }
    }

    /// - Parameters:
    ///   - more: further serial-pedometer sources, named `pedo2`, `pedo3`, …
    ///   - database: a SQLite store to add beside the collecting sink (it stores the checkpoints).
    func start(
        _ config: [String: JSONValue], more: [[String: JSONValue]] = [], clock: ManualClock, database: String? = nil
    ) throws -> Harness {
        let logs = RecordingLogSink()
        let environment = TestEnvironment.make(name: "pedo", clock: clock, directory: directory, logSink: logs)
        var sources: [ConfiguredSource] = []
        for (index, config) in ([config] + more).enumerated() {
            let name = index == 0 ? "pedo" : "pedo\(index + 1)"
            let environment = TestEnvironment.make(name: name, clock: clock, directory: directory, logSink: logs)
            let source = SerialPedometerSource(
                settings: try JSONValue.object(config).decodeStrictly(SerialPedometerConfiguration.self).validated(in: environment),
                environment: environment)
            sources.append(ConfiguredSource(name: name, kind: SerialPedometerSource.kind, source: source))
        }
        let sink = CollectingSink()
        var sinks = [ConfiguredSink(name: "collect", kind: "collect", queue: QueueConfiguration(), sink: sink)]
        if let database {
            // No batch window: the manual clock would hold every commit until it is advanced.
            let store = try SQLiteSink(
                settings: .init(batchSize: 500, batchWindow: .zero),
                environment: TestEnvironment.make(
                    name: "sqlite", clock: clock, directory: directory, logSink: logs, store: try HealthStore(path: database)))
            sinks.append(ConfiguredSink(name: "sqlite", kind: SQLiteSink.kind, queue: QueueConfiguration(), sink: store))
        }
        let gateway = Gateway(sources: sources, sinks: sinks, clock: clock, logger: environment.logger)
        let shutdown = ShutdownSignal()
        let task = Task { await gateway.run(shutdown: shutdown) }
        return Harness(gateway: gateway, sink: sink, shutdown: shutdown, task: task, logs: logs)
    }

    /// Reads the master until `text` has arrived (the gateway's request).
    /// Waits until the device side of `pty` received `text`. With `clock`, also moves it on by a
    /// second every 100 ms of real time until then: a source that is between two reconnect
    /// attempts when the test first advances the clock would otherwise sleep on it for ever.
    func expectRequest(_ text: String, on pty: PseudoTerminal, advancing clock: ManualClock? = nil) async throws {
        let received = Mutex<[UInt8]>([])
        let lastAdvance = Mutex(ContinuousClock.now)
        try await waitUntil("the device to receive \(text.debugDescription)") {
            if let chunk = try? pty.master.read() { received.withLock { $0 += chunk } }
            if String(decoding: received.withLock { $0 }, as: UTF8.self).contains(text) { return true }
            if let clock, lastAdvance.withLock({ ContinuousClock.now - $0 > .milliseconds(100) }) {
                lastAdvance.withLock { $0 = ContinuousClock.now }
                clock.advance(by: .seconds(1))
            }
            return false
        }
    }

    func send(_ text: String, to pty: PseudoTerminal) throws {
        try pty.write(Array(text.utf8))
    }

    func sentence(_ body: String) -> String { HGPTextDecoder.sentence(body) }

    func link(_ link: URL, to pty: PseudoTerminal) throws {
        try? FileManager.default.removeItem(at: link)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: pty.slavePath)
    }

    func testCountsExactStepsThroughNoiseHangUpReconnectAndReboot() async throws {
        let clock = ManualClock()
        let devicePath = directory.appendingPathComponent("pedometer")
        var pty = try PseudoTerminal()
        try link(devicePath, to: pty)
        let harness = try start(
            ["path": .string(devicePath.path), "baudRate": .number(9600), "reconnectIntervalSeconds": .number(2)], clock: clock)

        // Open, termios, identification exchange.
        try await expectRequest("ID?\r\n", on: pty)
        XCTAssertEqual(try pty.slaveAttributes().baudRate, 9600)
        XCTAssertTrue(try pty.slaveAttributes().isRaw)
        try send(sentence("ID,Acme,StepPod,SN-T1,2.0"), to: pty)

        // Each reading is sent once the previous one is counted, with the clock moved between.
        func reading(_ body: String, expect counter: String) async throws {
            try send(sentence(body), to: pty)
            try await waitUntil("counter \(counter)") { harness.detail("counter.SN-T1") == counter }
            clock.advance(by: .seconds(10))
        }
        try await reading("ST,1000,700", expect: "1000")  // baseline
        try await reading("ST,1010,707.5", expect: "1010")  // +10
        // Noise: binary garbage, a wrong checksum carrying a huge count, an overlong line, a
        // reading split in two writes.
        try pty.write([0x00, 0xFF, 0x13, 0x0A])
        try send("$ST,4000000000*00\r\n", to: pty)
        try send(String(repeating: "y", count: 400) + "\n", to: pty)
        let split = sentence("ST,1030")
        try send(String(split.prefix(6)), to: pty)
        try send(String(split.dropFirst(6)), to: pty)
        try await waitUntil("counter 1030") { harness.detail("counter.SN-T1") == "1030" }  // +20
        clock.advance(by: .seconds(10))

        // The device hangs up (unplugged): the reader ends, the source waits and reopens the
        // same path, which now leads to a new pty (the device came back).
        pty.hangUp()
        try await waitUntil("the hang-up to be seen") { harness.detail("connection")?.hasPrefix("lost") == true }
        pty = try PseudoTerminal()
        try link(devicePath, to: pty)
        clock.advance(by: .seconds(2))
        try await expectRequest("ID?\r\n", on: pty)
        try send(sentence("ID,Acme,StepPod,SN-T1,2.0"), to: pty)
        try await reading("ST,1040", expect: "1040")  // +10, across the disconnection
        try await reading("ST,5", expect: "5")  // reboot: +5 since boot

        XCTAssertEqual(harness.steps, 45)
        let samples = harness.stepSamples
        XCTAssertEqual(samples.map(\.quantity.value), [10, 20, 10, 5])
        // Contiguous, truthful intervals: each starts where the previous ended.
        for (previous, next) in zip(samples, samples.dropFirst()) {
            XCTAssertEqual(next.startDate, previous.endDate)
        }
        XCTAssertEqual(Set(samples.map { $0.device?.localIdentifier }), ["SN-T1"])
        XCTAssertEqual(samples.first?.device?.manufacturer, "Acme")
        XCTAssertEqual(samples.first?.device?.firmwareVersion, "2.0")
        XCTAssertEqual(samples.last?.metadata["healthgate.counterEvent"], .string("reset"))
        XCTAssertNotNil(samples.first?.metadata.syncIdentifier)
        // Distance came with the first two readings only.
        let distances = harness.sink.records.compactMap { record -> Double? in
            guard case .quantity(let sample) = record, sample.type == .distanceWalkingRunning else { return nil }
            return sample.quantity.value
        }
        XCTAssertEqual(distances, [7.5])

        // Garbage was counted and logged with the device's name, never crashed or stalled.
        XCTAssertEqual(harness.detail("garbage.noise"), "1")
        XCTAssertEqual(harness.detail("garbage.checksum"), "1")
        XCTAssertEqual(harness.detail("garbage.overlong"), "1")
        XCTAssertTrue(harness.logs.entries.contains {
            $0.message.contains("garbage") && $0.device == "StepPod SN-T1 [SN-T1]"
        })
        await harness.stop()
        pty.hangUp()
    }

    func testRestartResumesFromTheStoredCounterWithoutLossOrDoubleCounting() async throws {
        let clock = ManualClock()
        var pty = try PseudoTerminal()
        let path = directory.appendingPathComponent("pedometer")
        let database = directory.appendingPathComponent("samples.sqlite").path
        try link(path, to: pty)
        let first = try start(["path": .string(path.path)], clock: clock, database: database)
        try await expectRequest("ID?", on: pty)
        try send(sentence("ID,Acme,StepPod,SN-R,1"), to: pty)
        try send(sentence("ST,100"), to: pty)
        try await waitUntil("baseline") { first.detail("counter.SN-R") == "100" }
        clock.advance(by: .seconds(30))
        try send(sentence("ST,110"), to: pty)
        try await waitUntil("second reading") { first.detail("counter.SN-R") == "110" }
        let lastDate = clock.now()
        await first.stop()
        XCTAssertEqual(first.steps, 10)
        pty.hangUp()

        // The gateway restarts (a new source instance, same store): the counter comes back from
        // the checkpoint committed with the last samples.
        clock.advance(by: .seconds(600))
        pty = try PseudoTerminal()
        try link(path, to: pty)
        let harness = try start(["path": .string(path.path)], clock: clock, database: database)
        try await expectRequest("ID?", on: pty)
        try send(sentence("ID,Acme,StepPod,SN-R,1"), to: pty)
        try send(sentence("ST,125"), to: pty)
        try await waitUntil("resumed reading") { harness.detail("counter.SN-R") == "125" }
        await harness.stop()
        XCTAssertEqual(harness.steps, 15, "only the steps since the last stored reading")
        XCTAssertEqual(harness.stepSamples.first?.startDate, lastDate, "the interval resumes at the stored reading")
        pty.hangUp()
        let stored = try await HealthStore(path: database, access: .readOnly).samples(of: .stepCount)
        XCTAssertEqual(stored.map(\.quantity.value), [10, 15])
    }

    /// Without a store of checkpoints (only a collecting sink) a restart re-baselines: the
    /// documented behaviour when no SQLite sink is configured.
    func testWithoutACheckpointStoreARestartSetsANewBaseline() async throws {
        let clock = ManualClock()
        var pty = try PseudoTerminal()
        let path = directory.appendingPathComponent("pedometer")
        try link(path, to: pty)
        let first = try start(["path": .string(path.path)], clock: clock)
        try await expectRequest("ID?", on: pty)
        try send(sentence("ID,Acme,StepPod,SN-N,1"), to: pty)
        try send(sentence("ST,100"), to: pty)
        try await waitUntil("baseline") { first.detail("counter.SN-N") == "100" }
        await first.stop()
        pty.hangUp()
        pty = try PseudoTerminal()
        try link(path, to: pty)
        let second = try start(["path": .string(path.path)], clock: clock)
        try await expectRequest("ID?", on: pty)
        try send(sentence("ID,Acme,StepPod,SN-N,1"), to: pty)
        try send(sentence("ST,125"), to: pty)
        try await waitUntil("new baseline") { second.detail("counter.SN-N") == "125" }
        await second.stop()
        XCTAssertEqual(second.steps, 0)
        pty.hangUp()
    }

    /// A pedometer moved between two ports, each its own `path` source, and back: its counter
    /// follows the device, so every step is counted once and its intervals never overlap.
    func testAPedometerMovedBetweenPortsKeepsItsCount() async throws {
        let clock = ManualClock()
        let pathA = directory.appendingPathComponent("port-a")
        let pathB = directory.appendingPathComponent("port-b")
        let database = directory.appendingPathComponent("samples.sqlite").path
        var pty = try PseudoTerminal()
        try link(pathA, to: pty)
        let harness = try start(
            ["path": .string(pathA.path), "reconnectIntervalSeconds": .number(1)],
            more: [["path": .string(pathB.path), "reconnectIntervalSeconds": .number(1)]], clock: clock, database: database)
        var total: UInt32 = 500
        var walked = 0.0
        func readings(_ count: Int, on pty: PseudoTerminal, reopened: Bool = false) async throws {
            try await expectRequest("ID?", on: pty, advancing: reopened ? clock : nil)
            try send(sentence("ID,Acme,StepPod,SN-M,1"), to: pty)
            for _ in 0..<count {
                clock.advance(by: .seconds(5))
                total += 7
                walked += 7
                try send(sentence("ST,\(total)"), to: pty)
                let expected = String(total)
                try await waitUntil("counter \(expected)") {
                    harness.gateway.statusBoard.snapshot().contains { $0.details["counter.SN-M"] == expected }
                }
            }
        }
        try send(sentence("ID,Acme,StepPod,SN-M,1"), to: pty)
        try send(sentence("ST,\(total)"), to: pty)  // baseline on A
        let baseline = String(total)
        try await waitUntil("baseline") { harness.detail("counter.SN-M") == baseline }
        try await readings(3, on: pty)
        for next in [pathB, pathA] {
            pty.hangUp()
            pty = try PseudoTerminal()
            try link(next, to: pty)
            try await readings(3, on: pty, reopened: true)
        }
        await harness.stop()
        pty.hangUp()
        XCTAssertEqual(harness.steps, walked)
        let stored = try await HealthStore(path: database, access: .readOnly).samples(of: .stepCount)
        XCTAssertEqual(stored.reduce(0) { $0 + $1.quantity.value }, walked)
        for (previous, next) in zip(stored, stored.dropFirst()) {
            XCTAssertGreaterThanOrEqual(next.startDate, previous.endDate, "no overlapping intervals")
        }
    }

    func testAMissingPathIsRetriedAndLoggedOnceUntilTheDeviceAppears() async throws {
        let clock = ManualClock()
        let path = directory.appendingPathComponent("not-yet")
        let harness = try start(["path": .string(path.path), "reconnectIntervalSeconds": .number(2)], clock: clock)
        for attempt in 1...3 {
            try await waitUntil("attempt \(attempt) waiting") { clock.sleeperCount >= 1 }
            XCTAssertTrue(harness.detail("connection")?.contains("ENOENT") ?? false)
            clock.advance(by: .seconds(2))
        }
        let pty = try PseudoTerminal()
        try link(path, to: pty)
        try await waitUntil("a sleeper for the next attempt") { clock.sleeperCount >= 1 }
        clock.advance(by: .seconds(2))
        try await expectRequest("ID?", on: pty)
        XCTAssertEqual(harness.logs.entries.filter { $0.message.contains("No such file") }.count, 1, "logged once")
        XCTAssertEqual(harness.status?.errors, 1)
        await harness.stop()
        pty.hangUp()
    }

    func testWithoutAnIdentificationAnswerReadingsCountUnderThePath() async throws {
        let clock = ManualClock()
        let pty = try PseudoTerminal()
        let harness = try start(["path": .string(pty.slavePath), "identificationTimeoutSeconds": .number(3)], clock: clock)
        try await expectRequest("ID?", on: pty)
        try send("ST,7\nST,9\n", to: pty)
        try await waitUntil("the identification timer") { clock.sleeperCount >= 1 }
        clock.advance(by: .seconds(3))
        try await waitUntil("held readings") { harness.detail("counter.\(pty.slavePath)") == "9" }
        XCTAssertEqual(harness.steps, 2)
        XCTAssertEqual(harness.stepSamples.first?.device?.localIdentifier, pty.slavePath)
        await harness.stop()
        pty.hangUp()
    }

    func testSimulatorPlaysTheDocumentedScriptToAnExactTotal() async throws {
        let clock = ManualClock()
        let simulatorClock = ManualClock()
        let logs = RecordingLogSink()
        let simulator = try PedometerSimulator(
            clock: simulatorClock, logger: Logger(label: "simulator", sink: logs))
        let harness = try start(["path": .string(simulator.devicePath)], clock: clock)
        let play = Task { try await simulator.run(ticks: 14) }
        for tick in 1...14 {
            try await simulatorClock.waitForSleepers(1)
            simulatorClock.advance(by: .seconds(1))
            try await waitUntil("tick \(tick)") { simulator.ticksEmitted == tick }
            let expected = String(PedometerSimulator.Script.demo.count(atTick: tick))
            try await waitUntil("reading \(tick) counted") { harness.detail("counter.SIM-0001") == expected }
            clock.advance(by: .seconds(1))
        }
        try await play.value
        let expected = Double(PedometerSimulator.expectedSteps(readings: 14))
        XCTAssertEqual(expected, 26)
        XCTAssertEqual(harness.steps, expected)
        XCTAssertGreaterThanOrEqual(simulator.identificationRequests, 1)
        XCTAssertEqual(harness.detail("garbage.checksum"), "1")
        XCTAssertEqual(harness.detail("garbage.noise"), "1")
        XCTAssertEqual(harness.detail("garbage.overlong"), "1")
        await harness.stop()
        simulator.hangUp()
    }

    func testDemoHelperReturnsAConfigurationForThePtySlave() throws {
        let (configuration, _) = try SerialPedometerDemo.start(
            clock: ManualClock(), logger: Logger(label: "demo", sink: RecordingLogSink()))
        let decoded = try configuration.decodeStrictly(SerialPedometerConfiguration.self)
        XCTAssertTrue(decoded.connection.path?.hasPrefix("/dev/pts/") ?? false)
        let environment = TestEnvironment.make(directory: directory)
        let source = SerialPedometerSource(settings: try decoded.validated(in: environment), environment: environment)
        XCTAssertEqual(source.connection.serial.baudRate, 115_200)
    }
}
