import Foundation
import GatewayTesting
import HealthModel
import RemoteSinkKit
import XCTest

/// End to end: real `healthgate run` processes (a simulated heart-rate monitor, a `sqlite` sink and
/// an `mqtt` sink) against a real `mosquitto` on 127.0.0.1, recorded by a real `mosquitto_sub`.
/// What arrives is compared with what each gateway's own SQLite store holds.
final class MQTTFleetTests: XCTestCase {
    var directory: URL!
    var broker: MosquittoBroker!

    override func setUp() async throws {
        directory = try TestEnvironment.temporaryDirectory("mqtt-fleet")
        broker = try MosquittoBroker(directory: directory, persistent: true)
    }

    override func tearDown() async throws {
        broker.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// kill -9 of the gateway while the broker is down, then both start again: every record the
    /// store held unsent at the kill arrives with its uuid and the JSON of its version in the
    /// store, and so does every record of the second run; nothing else arrives.
    func testKillDashNineWhileTheBrokerIsDownThenRestartBothLosesNothing() async throws {
        let gateway = try FleetGateway(gatewayName: "kill-test", brokerPort: broker.port)
        defer { try? FileManager.default.removeItem(at: gateway.executable.root) }
        let first = try gateway.start()
        try await gateway.waitUntilUnsent(20, running: first)
        first.send(SIGKILL)
        _ = try await first.waitForExit(timeout: .seconds(30))
        let pending = try await gateway.unsentRecords()
        let pendingReadings = try await gateway.unsentReadings()
        XCTAssertGreaterThanOrEqual(pendingReadings, 20)

        try await broker.start()
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let second = try await gateway.start(seconds: 4).waitForExit(timeout: .seconds(120))
        XCTAssertEqual(second.status, 0, second.standardError.suffix(4000).description)
        let left = try await gateway.unsentBesidesTheSeriesClosedAtTheStop()
        XCTAssertEqual(left.map(\.id), [], "everything was sent at the graceful stop")
        let expected = try await gateway.storedUUIDs()
        XCTAssertTrue(Set(pending.keys).isSubset(of: expected))
        XCTAssertGreaterThan(expected.count, pending.count, "the second run stored records too")

        try await waitUntil(timeout: .seconds(20), "the recorder to receive every record") {
            Set(recorder.messages.flatMap(\.uuids)).isSuperset(of: expected)
        }
        let records = recorder.messages.filter { $0.topic.hasPrefix("healthgate/kill-test/") && !$0.topic.hasSuffix("/status") }
        XCTAssertEqual(Set(records.flatMap(\.uuids)), expected, "exactly what the store holds")
        // A record unsent at the kill arrives with the JSON of its version in the store then, or,
        // a series that grew or closed in the second run, in a later version.
        for message in records { XCTAssertEqual(message.uuids.count, 1) }
        for (uuid, payload) in pending {
            let published = records.filter { $0.uuids == [uuid] }
            let later = published.contains { message in
                Self.syncVersion(message.payload) > Self.syncVersion(payload)
            }
            XCTAssertTrue(
                published.contains { $0.payload == payload } || later, "\(uuid) arrived with other JSON than the store held at the kill")
        }
    }

    /// The delivery window's invariant through the MQTT sink (issue 43): the broker goes away
    /// while batches are in flight, and SIGTERM comes while they wait for it. The gateway stops
    /// at once (exit 0), its cursor before the oldest batch the broker did not acknowledge; the
    /// next start, with the broker back, publishes every record the store holds.
    func testAStopWhileTheBrokerIsDownKeepsTheCursorBeforeWhatItDidNotAcknowledge() async throws {
        try await broker.start()
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let gateway = try FleetGateway(gatewayName: "stop-test", brokerPort: broker.port, mqtt: #""maxInFlight": 4"#)
        defer { try? FileManager.default.removeItem(at: gateway.executable.root) }
        let first = try gateway.start()
        do {
            try await waitUntil(timeout: .seconds(60), "records published") { recorder.messages.count >= 20 }
        } catch {
            first.send(SIGKILL)
            throw error
        }
        broker.stop()
        try await gateway.waitUntilUnsent(20, running: first)
        first.send(SIGTERM)
        let stopped = try await first.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(stopped.status, 0, stopped.standardError.suffix(4000).description)
        XCTAssertTrue(stopped.standardError.contains("stopping while"), stopped.standardError.suffix(4000).description)
        let pending = try await gateway.unsentRecords()
        let pendingReadings = try await gateway.unsentReadings()
        XCTAssertGreaterThanOrEqual(pendingReadings, 20)

        try await broker.start()
        // The first recorder lost its broker; a second one hears what comes now.
        let late = try MQTTRecorder(broker: broker, filter: "healthgate/#", name: "late")
        defer { late.stop() }
        try await late.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let second = try await gateway.start(seconds: 4).waitForExit(timeout: .seconds(120))
        XCTAssertEqual(second.status, 0, second.standardError.suffix(4000).description)
        let left = try await gateway.unsentBesidesTheSeriesClosedAtTheStop()
        XCTAssertEqual(left.map(\.id), [], "everything was sent at the graceful stop")
        let expected = try await gateway.storedUUIDs()
        try await waitUntil(timeout: .seconds(20), "the recorders to receive every record the store holds") {
            Set((recorder.messages + late.messages).flatMap(\.uuids)).isSuperset(of: expected)
        }
        XCTAssertTrue(Set(late.messages.flatMap(\.uuids)).isSuperset(of: pending.keys), "what waited at the stop was published after it")
    }

    /// Three gateways with distinct names publish to one broker at once: a consumer sees each
    /// gateway's records on that gateway's topics only, every one its store holds, exactly once
    /// after de-duplication by uuid, and each gateway's status.
    func testThreeGatewaysPublishEveryStoredRecordOnTheirOwnTopics() async throws {
        try await broker.start()
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let names = ["ward-1", "ward-2", "clinic-north-3"]
        let gateways = try names.map { try FleetGateway(gatewayName: $0, brokerPort: broker.port) }
        defer { for gateway in gateways { try? FileManager.default.removeItem(at: gateway.executable.root) } }
        let runs = try gateways.map { try $0.start(seconds: 4) }
        for (gateway, run) in zip(gateways, runs) {
            let result = try await run.waitForExit(timeout: .seconds(120))
            XCTAssertEqual(result.status, 0, "\(gateway.gatewayName): \(result.standardError.suffix(4000))")
            let unsent = try await gateway.unsentBesidesTheSeriesClosedAtTheStop()
            XCTAssertEqual(unsent.map(\.id), [], gateway.gatewayName)
        }
        var expected: [String: Set<String>] = [:]
        for gateway in gateways {
            expected[gateway.gatewayName] = try await gateway.storedUUIDs()
            XCTAssertFalse(expected[gateway.gatewayName, default: []].isEmpty, gateway.gatewayName)
        }
        let everything = expected.values.reduce(Set<String>()) { $0.union($1) }
        XCTAssertEqual(everything.count, expected.values.map(\.count).reduce(0, +), "the gateways' uuids are distinct")
        try await waitUntil(timeout: .seconds(20), "the recorder to receive every record of every gateway") {
            Set(recorder.messages.flatMap(\.uuids)).isSuperset(of: everything)
        }
        let messages = recorder.messages
        for name in names {
            let records = messages.filter { $0.topic.hasPrefix("healthgate/\(name)/") && !$0.topic.hasSuffix("/status") }
            XCTAssertEqual(Set(records.flatMap(\.uuids)), expected[name], "\(name): exactly what its store holds")
            for message in records {
                let levels = message.topic.split(separator: "/", omittingEmptySubsequences: false)
                XCTAssertEqual(levels.count, 4, message.topic)
                let type = try XCTUnwrap(levels.last)
                let object = try JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any]
                XCTAssertEqual(object?["uuid"] as? String, message.uuids.first, message.topic)
                XCTAssertEqual(type == "heartbeatSeries", object?["beats"] != nil, "\(message.topic): \(message.payload.prefix(200))")
                if type == "heartRate" {
                    XCTAssertEqual(object?["type"] as? String, "heartRate")
                    XCTAssertNotNil(object?["quantities"] ?? object?["value"], "neither a series nor a sample: \(message.payload.prefix(200))")
                }
                // The device level is the device's local identifier, its `/`, `+` and `#` made `_`.
                let device = object?["device"] as? [String: Any]
                let identifier = (device?["localIdentifier"] ?? device?["name"]) as? String
                XCTAssertEqual(
                    levels.count > 2 ? String(levels[2]) : nil,
                    identifier.map { String($0.map { "/+#".contains($0) ? "_" : $0 }) }, message.topic)
                let metadata = object?["metadata"] as? [String: Any]
                XCTAssertEqual(metadata?["healthgate.gateway"] as? String, name, "the record names the gateway of its topic")
            }
            let status = messages.filter { $0.topic == "healthgate/\(name)/status" }.map(\.payload)
            XCTAssertEqual(status.first, "online", name)
            XCTAssertEqual(status.last, "offline", name)
        }
        let foreign = messages.filter { message in
            !message.topic.hasPrefix("healthgate/probe") && !names.contains { message.topic.hasPrefix("healthgate/\($0)/") }
        }
        XCTAssertEqual(foreign.map(\.topic), [], "nothing outside the three gateways' topics")
    }

    /// The `metadata.syncVersion` of a record's JSON; 0 without one.
    static func syncVersion(_ payload: String) -> Int {
        let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
        return (object?["metadata"] as? [String: Any])?["syncVersion"] as? Int ?? 0
    }
}
