import Foundation
import GatewayTesting
import HealthModel
import HealthStore
@testable import MQTTBroker
import RemoteSinkKit
import GatewayRuntime
import SampleBus
import XCTest

/// The sink following a real store, against a real `mosquitto` on 127.0.0.1, recorded by a real
/// `mosquitto_sub`.
final class MQTTBrokerSinkTests: BrokerAndStoreTestCase {
    let ids = SampleIDGenerator(seed: 11)

    let device = Device(name: "Polar H10", manufacturer: "Polar Electro Oy", localIdentifier: "A0:9E:1A:00:11:22")

    func heartRate(_ bpm: Double, at offset: Double) throws -> HealthRecord {
        let date = Date(timeIntervalSince1970: 1_800_000_000 + offset)
        return .quantity(try QuantitySample(
            id: ids.next(), type: .heartRate, quantity: Quantity(bpm, .countPerMinute), start: date, end: date, device: device))
    }

    /// A reading of a type the store keeps one sample each (no series policy): what the tests of
    /// delivery itself publish, one uuid per reading.
    func spO2(_ percent: Double, at offset: Double) throws -> HealthRecord {
        let date = Date(timeIntervalSince1970: 1_800_000_000 + offset)
        return .quantity(try QuantitySample(
            id: ids.next(), type: .oxygenSaturation, quantity: Quantity(percent, .percent), start: date, end: date, device: device))
    }

    struct Running: Sendable {
        var sink: MQTTBrokerSink
        var store: HealthStore
        var name: String
        var task: Task<Void, any Error>
        var status: StatusReporter
        var shutdown: ShutdownSignal

        /// Commits `records` into the store the sink follows.
        func feed(_ records: [HealthRecord]) async {
            do {
                try await store.write(records)
            } catch {
                XCTFail("cannot write into the store: \(error)")
            }
        }

        /// Requests a graceful stop: the sink publishes what it can, then returns.
        func finish() {
            shutdown.requestStop()
        }

        /// The changes after the sink's committed cursor.
        func unsent() async throws -> Int {
            let cursor = try await store.follower(name)?.anchor ?? 0
            let changes = try await store.changes(since: cursor)
            return changes.added.count + changes.deleted.count
        }
    }

    func start(
        _ configuration: MQTTBrokerConfiguration, name: String = "broker", log: RecordingLogSink = RecordingLogSink()
    ) async throws -> Running {
        var environment = TestEnvironment.make(name: name, clock: SystemClock(), directory: directory, logSink: log, store: store)
        environment.gatewayName = "gw1"  // the configuration's top-level gatewayName
        let sink = try MQTTBrokerSink(settings: configuration.validated(in: environment), environment: environment)
        let status = StatusBoard().register(name: name, kind: MQTTBrokerSink.kind, role: .sink)
        let shutdown = ShutdownSignal()
        let context = FollowerContext(
            logger: environment.logger, clock: SystemClock(), status: status, stopRequest: StopRequest(shutdown), storeSettled: { true })
        let task = Task { try await sink.run(context: context) }
        return Running(sink: sink, store: store, name: name, task: task, status: status, shutdown: shutdown)
    }

    func configuration(_ changes: (inout MQTTBrokerConfiguration) -> Void = { _ in }) -> MQTTBrokerConfiguration {
        var configuration = MQTTBrokerConfiguration(host: "127.0.0.1").with { $0.port = broker.port; $0.batchSize = 7; $0.maxInFlight = 1 }
        configuration.retry = RetryConfiguration(initialDelaySeconds: 0.05, maxDelaySeconds: 1, jitter: 0.2)
        configuration.ackTimeoutSeconds = 5
        changes(&configuration)
        return configuration
    }

    func testEveryRecordIsPublishedOnceWithItsUUIDOnItsDeviceAndTypeTopic() async throws {
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let running = try await start(configuration())
        let records = try (0..<25).map { try spO2(97 + Double($0 % 4), at: Double($0)) }
        await running.feed(records)
        try await waitUntil(timeout: .seconds(30), "every record acknowledged") {
            running.status.current?.records == 25
        }
        running.finish()
        try await running.task.value
        try await waitUntil(timeout: .seconds(10), "the offline status recorded") {
            recorder.messages.contains { $0.topic == "healthgate/gw1/status" && $0.payload == "offline" }
        }
        let messages = recorder.messages
        let samples = messages.filter { $0.topic == "healthgate/gw1/A0:9E:1A:00:11:22/oxygenSaturation" }
        XCTAssertEqual(samples.map(\.uuids), records.map { [$0.id.uuidString] }, "each record once, in order, with its uuid")
        let encoder = HealthJSON.makeEncoder()
        for (message, record) in zip(samples, records) {
            guard case .quantity(let sample) = record else { continue }
            XCTAssertEqual(message.payload, String(decoding: try encoder.encode(sample), as: UTF8.self))
        }
        let status = messages.filter { $0.topic == "healthgate/gw1/status" }.map(\.payload)
        XCTAssertEqual(status.first, "online")
        XCTAssertEqual(status.last, "offline")
    }

    /// Issue 65: a reading attributed to a person goes to their topic too, the same payload;
    /// one attributed to nobody to its device's topic only.
    func testAnAttributedReadingGoesToItsPersonsTopicToo() async throws {
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let running = try await start(configuration())
        let records = try (0..<6).map { index -> HealthRecord in
            let date = Date(timeIntervalSince1970: 1_800_000_000 + Double(index))
            return .quantity(try QuantitySample(
                id: ids.next(), type: .oxygenSaturation, quantity: Quantity(95 + Double(index % 3), .percent), start: date, end: date,
                device: device, metadata: index.isMultiple(of: 2) ? [.person: .string("Ana Lima")] : [:]))
        }
        await running.feed(records)
        try await waitUntil(timeout: .seconds(30), "every record acknowledged") { running.status.current?.records == 6 }
        running.finish()
        try await running.task.value
        try await waitUntil(timeout: .seconds(10), "the offline status recorded") {
            recorder.messages.contains { $0.topic == "healthgate/gw1/status" && $0.payload == "offline" }
        }
        let anas = recorder.messages.filter { $0.topic == "healthgate/gw1/people/Ana Lima/oxygenSaturation" }
        let anasRecords = records.enumerated().filter { $0.offset.isMultiple(of: 2) }.map(\.element)
        XCTAssertEqual(anas.map(\.uuids), anasRecords.map { [$0.id.uuidString] })
        let onDevice = recorder.messages.filter { $0.topic == "healthgate/gw1/A0:9E:1A:00:11:22/oxygenSaturation" }
        XCTAssertEqual(onDevice.map(\.uuids), records.map { [$0.id.uuidString] }, "every reading on its device's topic")
        XCTAssertEqual(zip(anas, onDevice.enumerated().filter { $0.offset.isMultiple(of: 2) }).filter { $0.payload != $1.element.payload }.count, 0)
    }

    func testBatchMessagesCarryAJSONArrayAndOneUUIDPropertyPerRecord() async throws {
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let running = try await start(configuration { $0.messages = .batch })
        let records = try (0..<10).map { try spO2(97, at: Double($0)) }
        await running.feed(records)
        try await waitUntil(timeout: .seconds(30), "every record acknowledged") { running.status.current?.records == 10 }
        // The broker acknowledged them to the sink; the subscriber gets them after.
        try await waitUntil(timeout: .seconds(10), "the recorder to receive every record") {
            Set(recorder.messages.flatMap(\.uuids)).isSuperset(of: records.map(\.id.uuidString))
        }
        running.finish()
        try await running.task.value
        let batches = recorder.messages.filter { $0.topic.hasSuffix("/oxygenSaturation") }
        XCTAssertEqual(batches.flatMap(\.uuids), records.map(\.id.uuidString))
        for batch in batches {
            let array = try JSONSerialization.jsonObject(with: Data(batch.payload.utf8)) as? [[String: Any]]
            XCTAssertEqual(array?.compactMap { $0["uuid"] as? String }, batch.uuids)
        }
    }

    func testBrokerDownAtStopKeepsTheRecordsForTheNextStart() async throws {
        broker.stop()
        let running = try await start(configuration { $0.ackTimeoutSeconds = 0.5 })
        let records = try (0..<5).map { try spO2(97, at: Double($0)) }
        await running.feed(records)
        try await waitUntil(timeout: .seconds(20), "the failure shown in status") {
            running.status.current?.lastError?.contains("delivery failed") == true
        }
        running.finish()
        try await running.task.value
        let kept = try await running.unsent()
        XCTAssertEqual(kept, 5, "the records wait in the store")

        try await broker.start()
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let again = try await start(configuration())
        try await waitUntil(timeout: .seconds(30), "the kept records published") { try await again.unsent() == 0 }
        again.finish()
        try await again.task.value
        XCTAssertEqual(
            Set(recorder.messages.filter { $0.topic.hasSuffix("/oxygenSaturation") }.flatMap(\.uuids)), Set(records.map(\.id.uuidString)))
    }

    /// A deletion is a message on `{prefix}/{gateway}/deleted`; a new version of an object goes to
    /// the object's topic again, its version in the payload.
    func testDeletionsAndNewVersionsArePublished() async throws {
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let records = try (0..<3).map { try spO2(97, at: Double($0)) }
        let running = try await start(configuration())
        await running.feed(records)
        try await waitUntil(timeout: .seconds(30), "the records published") { running.status.current?.records == 3 }
        _ = try await store.delete(.ids([records[1].id]))
        let series = try HeartbeatSeriesSample(
            id: ids.next(), start: Date(timeIntervalSince1970: 1_800_000_010), end: Date(timeIntervalSince1970: 1_800_000_011),
            beats: [Heartbeat(timeSinceSeriesStart: 0.5, precededByGap: false)], device: device,
            metadata: [.syncIdentifier: .string("s"), .syncVersion: .integer(1)])
        await running.feed([.heartbeatSeries(series)])
        let grown = try HeartbeatSeriesSample(
            id: series.id, start: series.startDate, end: Date(timeIntervalSince1970: 1_800_000_012),
            beats: series.beats + [Heartbeat(timeSinceSeriesStart: 1.3, precededByGap: false)], device: device,
            metadata: [.syncIdentifier: .string("s"), .syncVersion: .integer(2)])
        try await waitUntil(timeout: .seconds(30), "the first version published") {
            recorder.messages.contains { $0.topic.hasSuffix("/heartbeatSeries") }
        }
        await running.feed([.heartbeatSeries(grown)])
        try await waitUntil(timeout: .seconds(30), "everything published") { try await running.unsent() == 0 }
        running.finish()
        try await running.task.value
        let deleted = recorder.messages.filter { $0.topic == "healthgate/gw1/deleted" }
        XCTAssertEqual(deleted.map(\.uuids), [[records[1].id.uuidString]])
        let deletion = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(deleted.first).payload.utf8)) as? [String: String])
        XCTAssertEqual(deletion, ["kind": "quantity", "type": "oxygenSaturation", "uuid": records[1].id.uuidString])
        let versions = recorder.messages.filter { $0.topic == "healthgate/gw1/A0:9E:1A:00:11:22/heartbeatSeries" }
        XCTAssertEqual(versions.map(\.uuids), [[series.id.uuidString], [series.id.uuidString]])
        let last = try HealthJSON.makeDecoder().decode(HeartbeatSeriesSample.self, from: Data(try XCTUnwrap(versions.last).payload.utf8))
        XCTAssertEqual(last.metadata.syncVersion, 2)
        XCTAssertEqual(last.beats.count, 2)
    }

    func testConfigurationIsStrictAndRangeChecked() throws {
        let decoder = HealthJSON.makeDecoder()
        XCTAssertThrowsError(try ConfigurationJSONParser.parse(#"{"host": "h", "prot": 1}"#.utf8).decodeStrictly(MQTTBrokerConfiguration.self)) {
            XCTAssertTrue("\($0)".contains("port"), "\($0)")
        }
        // The shared renamed key (RemoteSinkConfiguration.followingRenamedKeys).
        XCTAssertThrowsError(try ConfigurationJSONParser.parse(#"{"host": "h", "outbox": {}}"#.utf8).decodeStrictly(MQTTBrokerConfiguration.self)) {
            XCTAssertTrue("\($0)".contains(#"did you mean "follow""#), "\($0)")
        }
        XCTAssertThrowsError(try decoder.decode(MQTTBrokerConfiguration.self, from: Data(#"{"host": "h", "password": "x"}"#.utf8)))
        let environment = TestEnvironment.make(directory: directory, store: store)
        let bad: [(String, MQTTBrokerConfiguration)] = [
            ("port", MQTTBrokerConfiguration(host: "h").with { $0.port = 70_000 }),
            ("topicPrefix", MQTTBrokerConfiguration(host: "h").with { $0.topicPrefix = "a/#" }),
            ("keepAliveSeconds", MQTTBrokerConfiguration(host: "h").with { $0.keepAliveSeconds = 1 }),
            ("passwordFile", MQTTBrokerConfiguration(host: "h").with { $0.passwordFile = "/nonexistent" }),
            ("caFile", MQTTBrokerConfiguration(host: "h").with { $0.caFile = "/nonexistent/ca.pem" }),
            ("retry.maxDelaySeconds", MQTTBrokerConfiguration(host: "h").with { $0.retry = RetryConfiguration(initialDelaySeconds: 5, maxDelaySeconds: 1, jitter: 0.2) }),
            ("maxInFlight", MQTTBrokerConfiguration(host: "h").with { $0.maxInFlight = 0 }),
            ("follow.maxBytes", MQTTBrokerConfiguration(host: "h").with { $0.follow = FollowConfiguration().with { $0.maxBytes = 10 } }),
        ]
        for (key, configuration) in bad {
            XCTAssertThrowsError(try configuration.validated(in: environment), key) {
                XCTAssertEqual(($0 as? PluginConfigurationError)?.keyPath, key)
            }
        }
    }

    func testSampleConfigDecodes() throws {
        let configuration = try GatewayConfiguration.load(from: TestEnvironment.sampleConfigurationURL())
        let sinks = configuration.sinks.filter { $0.kind == MQTTBrokerSink.kind }
        XCTAssertFalse(sinks.isEmpty)
        for sink in sinks {
            XCTAssertFalse(try sink.config.decodeStrictly(MQTTBrokerConfiguration.self).host.isEmpty)
        }
    }
}
