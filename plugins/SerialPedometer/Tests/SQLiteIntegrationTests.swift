import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import SQLiteStore
import GatewayRuntime
import SampleBus
import SerialPedometer
import XCTest

/// The simulator on a real pty, through the real gateway, into the real SQLite store (a file
/// in a temporary directory, WAL mode): the stored steps are exactly the documented total.
final class SQLiteIntegrationTests: XCTestCase {
    func testSimulatedPedometerStepsLandInSQLiteExactly() async throws {
        let directory = try TestEnvironment.temporaryDirectory("serial-pedometer-sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        let simulatorClock = ManualClock()
        let logs = RecordingLogSink()
        let simulator = try PedometerSimulator(clock: simulatorClock, logger: Logger(label: "simulator", sink: logs))
        let environment = TestEnvironment.make(name: "pedo", clock: clock, directory: directory, logSink: logs)
        let source = SerialPedometerSource(
            settings: try JSONValue.object(["path": .string(simulator.devicePath)]).decodeStrictly(SerialPedometerConfiguration.self)
                .validated(in: environment),
            environment: environment)
        let database = directory.appendingPathComponent("samples.sqlite").path
        let sink = try SQLiteSink(
            settings: try JSONValue.object([:]).decode(SQLiteSink.Configuration.self).validated(in: TestEnvironment.make(directory: directory)),
            environment: TestEnvironment.make(
                name: "sqlite", clock: clock, directory: directory, logSink: logs, store: try HealthStore(path: database)))
        let gateway = Gateway(
            sources: [ConfiguredSource(name: "pedo", kind: SerialPedometerSource.kind, source: source)],
            sinks: [ConfiguredSink(name: "sqlite", kind: SQLiteSink.kind, queue: QueueConfiguration(), sink: sink)],
            clock: clock, logger: environment.logger)
        let shutdown = ShutdownSignal()
        let running = Task { await gateway.run(shutdown: shutdown) }
        let play = Task { try await simulator.run(ticks: 14) }
        for tick in 1...14 {
            try await simulatorClock.waitForSleepers(1)
            simulatorClock.advance(by: .seconds(1))
            let expected = String(PedometerSimulator.Script.demo.count(atTick: tick))
            try await waitUntil("reading \(tick) counted") {
                gateway.statusBoard.status(of: "pedo")?.details["counter.SIM-0001"] == expected
            }
            clock.advance(by: .seconds(1))
        }
        try await play.value
        shutdown.requestStop()
        await running.value
        simulator.hangUp()

        let store = try HealthStore(path: database, access: .readOnly)
        let steps = try await store.samples(of: .stepCount)
        XCTAssertEqual(steps.reduce(0) { $0 + $1.quantity.value }, Double(PedometerSimulator.expectedSteps(readings: 14)))
        XCTAssertEqual(steps.count, 13)
        XCTAssertEqual(Set(steps.map { $0.device?.localIdentifier }), ["SIM-0001"])
        XCTAssertEqual(Set(steps.compactMap(\.syncIdentifier)).count, 13, "every interval has its own sync identifier")
        let meters = try await store.samples(of: .distanceWalkingRunning)
        XCTAssertEqual(meters.reduce(0) { $0 + $1.quantity.value }, 13 * 2 * 0.75)
    }
}
