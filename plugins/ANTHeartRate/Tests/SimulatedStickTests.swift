import ANTHeartRate
import ANTProtocol
import Foundation
import GatewayRuntime
import GatewayTesting
import HealthModel
import HealthStore
import SQLiteStore
import SampleBus
import SerialDevices
import XCTest

/// The simulated stick on a real pseudo-terminal, read as a stick at a path with a key file,
/// through the real gateway into the real SQLite store: every strap is found, each of its
/// heart-rate samples is one beat, its series and checkpoint are stored, its serial number (from
/// page 2) is in its samples' metadata and its status line; a stick that goes away (the pty hung
/// up) is a disconnection, not a failure.
final class SimulatedStickTests: XCTestCase {
    func testAClassThroughASimulatedStickLandsInSQLite() async throws {
        let directory = try TestEnvironment.temporaryDirectory("ant-sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = SystemClock()
        let logs = RecordingLogSink()
        let key = ANTNetworkKey.random()
        let keyFile = directory.appendingPathComponent("ant-network-key")
        try key.bytes.map { String(format: "%02X", $0) }.joined(separator: " ").write(to: keyFile, atomically: true, encoding: .utf8)
        let stick = try SimulatedANTStick(straps: 3, networkKey: key, seed: "stick", clock: clock, logger: Logger(label: "stick", sink: logs))
        let environment = TestEnvironment.make(name: "class", clock: clock, directory: directory, logSink: logs)
        let source = ANTHeartRateSource(
            settings: try JSONValue.object(["path": .string(stick.devicePath), "networkKeyFile": .string(keyFile.path)])
                .decodeStrictly(ANTHeartRateConfiguration.self).validated(in: environment),
            environment: environment)
        let database = directory.appendingPathComponent("samples.sqlite").path
        let sink = try SQLiteSink(
            settings: try JSONValue.object([:]).decode(SQLiteSink.Configuration.self).validated(in: TestEnvironment.make(directory: directory)),
            environment: TestEnvironment.make(
                name: "sqlite", clock: clock, directory: directory, logSink: logs, store: try HealthStore(path: database)))
        let gateway = Gateway(
            sources: [ConfiguredSource(name: "class", kind: ANTHeartRateSource.kind, source: source)],
            sinks: [ConfiguredSink(name: "sqlite", kind: SQLiteSink.kind, queue: QueueConfiguration(), sink: sink)],
            clock: clock, logger: environment.logger)
        let shutdown = ShutdownSignal()
        let running = Task { await gateway.run(shutdown: shutdown) }
        let play = Task { try await stick.run(hangUpAtEnd: false) }
        let straps = stick.straps
        let serials = stick.serialNumbers
        XCTAssertEqual(Set(serials.keys), Set(straps), "no legacy strap among three")
        // Every strap heard, at least six of its beats recorded, and its serial number known.
        try await waitUntil(timeout: .seconds(30), "six beats and the serial number of every strap") {
            let details = gateway.statusBoard.status(of: "class")?.details ?? [:]
            return straps.allSatisfy { strap in
                guard let summary = details["strap \(strap)"], let beats = Self.beats(in: summary), let serial = serials[strap]
                else { return false }
                return beats >= 6 && summary.hasSuffix(", serial \(serial)")
            }
        }
        XCTAssertEqual(gateway.statusBoard.status(of: "class")?.details["mode"], "continuous scan (channel 0, RF 2457 MHz)")
        let received = gateway.statusBoard.status(of: "class")?.details["broadcasts"]
        XCTAssertGreaterThanOrEqual(received.flatMap { Int($0.split(separator: " ")[0]) } ?? 0, 3 * 6, received ?? "no broadcasts detail")
        shutdown.requestStop()
        await running.value
        play.cancel()
        _ = await play.result

        let store = try HealthStore(path: database, access: .readOnly)
        let heartRates = try await store.samples(of: .heartRate)
        let byStrap = Dictionary(grouping: heartRates, by: { $0.device?.localIdentifier ?? "?" })
        XCTAssertEqual(Set(byStrap.keys), Set(straps.map(\.description)))
        XCTAssertTrue(heartRates.allSatisfy { $0.device?.radioIdentifier == $0.device?.localIdentifier }, "stored with its ANT+ id as its radio")
        for (strap, samples) in byStrap {
            XCTAssertGreaterThanOrEqual(samples.count, 6, strap)
            XCTAssertTrue(samples.allSatisfy { (45...200).contains($0.quantity.value) }, strap)
            // One sample per beat: at 45–200 bpm no two beats arrive within 0.2 s of each other
            // (four messages a second repeat a beat; a repeat stored would be 0.25 s apart).
            let dates = samples.map(\.startDate).sorted()
            XCTAssertEqual(dates.count, Set(dates).count, strap)
            // From page 2 on, every sample carries the strap's serial number (the lower 20 bits
            // of which are its device number) and no other.
            let serial = try XCTUnwrap(ANTDeviceIdentifier(strap).flatMap { serials[$0] })
            XCTAssertEqual(serial.value & 0xF_FFFF, ANTDeviceIdentifier(strap)?.deviceNumber)
            let ordered = samples.sorted { $0.startDate < $1.startDate }
            let first = try XCTUnwrap(ordered.firstIndex { $0.metadata.deviceSerialNumber != nil }, strap)
            XCTAssertTrue(ordered[first...].allSatisfy { $0.metadata.deviceSerialNumber == serial.description }, strap)
        }
        let series = try await store.heartbeatSeries()
        XCTAssertFalse(series.isEmpty)
        XCTAssertTrue(series.allSatisfy { $0.device?.localIdentifier?.hasPrefix("ant:120:") == true })
        XCTAssertTrue(series.contains { $0.metadata.deviceSerialNumber != nil }, "series carry the serial number too")
        for strap in straps {
            let checkpoint = try await store.checkpoint(namespace: StrapCheckpoint.namespace, key: strap.description)
            XCTAssertNotNil(checkpoint, "\(strap)'s checkpoint is committed with its samples")
        }
        XCTAssertFalse(logs.entries.contains { $0.message.contains(key.bytes.map { String(format: "%02X", $0) }.joined(separator: " ")) })
    }

    /// The demo gives each strap to a participant before the stick plays: the stick's straps are
    /// the same every time for the same seed (the source's name), distinct, and valid 20-bit ids;
    /// the demo's worn devices are exactly the straps its source's stick plays.
    func testTheStrapIdsFollowTheSeedAndTheDemoNamesTheStrapsItsStickPlays() throws {
        let ids = SimulatedANTStick.strapIdentifiers(count: 30, seed: "demo-ant-class")
        XCTAssertEqual(ids, SimulatedANTStick.strapIdentifiers(count: 30, seed: "demo-ant-class"))
        XCTAssertEqual(Set(ids).count, 30)
        XCTAssertTrue(ids.allSatisfy { $0.deviceNumber <= 0xF_FFFF && $0.deviceNumber & 0xFFFF != 0 && $0.deviceType == 120 })
        XCTAssertNotEqual(ids, SimulatedANTStick.strapIdentifiers(count: 30, seed: "another-class"))
        XCTAssertEqual(Array(ids.prefix(6)), SimulatedANTStick.strapIdentifiers(count: 6, seed: "demo-ant-class"))

        let demo = try XCTUnwrap(ANTHeartRateSource.demo)
        let run = try demo.start(SystemClock(), Logger(label: "demo", sink: RecordingLogSink()))
        let stick = try SimulatedANTStick(
            straps: ANTHeartRateSource.demoStraps, networkKey: .random(), seed: demo.name, clock: SystemClock(),
            logger: Logger(label: "stick", sink: RecordingLogSink()))
        XCTAssertEqual(run.wornDevices, stick.straps.map(\.description))
        XCTAssertEqual(run.configuration["simulation"]?["straps"], .number(Double(ANTHeartRateSource.demoStraps)))
    }

    /// The beats a strap's status summary counts (`live, 72 bpm, 14 beats, …`).
    static func beats(in summary: String) -> Int? {
        summary.split(separator: ",").lazy.map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.hasSuffix(" beats") }
            .flatMap { Int($0.dropLast(6)) }
    }
}
