import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// Every remote sink converges on the store: the real executable (two simulated heart-rate
/// monitors, the store, an `http-repository` sink and an `mqtt` sink), a recording HTTP server
/// and a real `mosquitto` on 127.0.0.1, killed with SIGKILL at random moments 20 times while the
/// server and the broker go down and come back and `healthgate delete` deletes stored heart
/// rates (their quantity series) from another process. Then one graceful run, and one without
/// sources that sends the series the store closed as the first closed, and:
///
/// - every object the store holds reached the server and the broker in its latest version (a
///   heartbeat or quantity series grows, so its later versions replace earlier ones);
/// - every deletion the store recorded reached both;
/// - nothing reached either that the store does not hold or did not delete.
///
/// The receivers apply what they get as a receiver should: a deletion is final, and of two
/// versions of an object the higher sync version wins (batches in flight may be answered out of
/// order). The seed of the random moments is printed; `HEALTHGATE_CONVERGENCE_SEED` repeats a run.
final class ConvergenceTests: TemporaryDirectoryTestCase {
    override class var directoryPrefix: String { "convergence" }

    /// What a receiver ended up with: the latest version of each object by uuid (its payload as
    /// JSON), and the uuids it was told were deleted.
    struct Received {
        var objects: [String: [String: Any]] = [:]
        var deleted: Set<String> = []
        var messages = 0

        mutating func store(_ object: [String: Any]) {
            guard let uuid = object["uuid"] as? String else { return }
            messages += 1
            if let held = objects[uuid], Self.version(held) > Self.version(object) { return }
            objects[uuid] = object
        }

        mutating func delete(_ uuid: String) {
            messages += 1
            deleted.insert(uuid)
        }

        /// The uuids present: stored and not deleted.
        var present: Set<String> { Set(objects.keys).subtracting(deleted) }
        var everything: Set<String> { Set(objects.keys).union(deleted) }

        static func version(_ object: [String: Any]) -> Int {
            ((object["metadata"] as? [String: Any])?["syncVersion"] as? Int) ?? 0
        }
    }

    func testTwentyKillsWhileReceiversGoDownAndComeBackLeaveEveryReceiverEqualToTheStore() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["HEALTHGATE_CONVERGENCE_SEED"] ?? "") ?? 29
        print("convergence: seed \(seed)")
        var random = SeededRandom(seed: seed)
        let healthgate = try HealthgateExecutable()
        let server = try RecordingServer.started(in: directory)
        defer { server.stop() }
        let brokerDirectory = directory.appendingPathComponent("broker")
        try FileManager.default.createDirectory(at: brokerDirectory, withIntermediateDirectories: true)
        let broker = try MosquittoBroker(directory: brokerDirectory, persistent: true)
        try await broker.start()
        defer { broker.stop() }
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")

        let store = directory.appendingPathComponent("store.sqlite").path
        let config = directory.appendingPathComponent("config.json")
        // The store's window is 0.2 s: a run killed within about a second commits several times
        // (with the default 2 s, most runs would be killed before their first commit).
        try """
            {"gatewayName": "conv",
             "sources": [{"kind": "ble-heart-rate", "name": "straps", "config": {
                "transport": "simulated", "maxDevices": 2, "heartbeatSeriesSeconds": 3,
                "simulation": {"heartRateMonitors": 2, "notificationsPerSecond": 4}}}],
             "store": {"path": "\(store)"},
             "sinks": [{"kind": "sqlite", "name": "store", "config": {"batchWindowSeconds": 0.2}},
                       {"kind": "http-repository", "name": "repo", "config": {
                          "url": "\(server.url)", "batchSize": 20, "batchIntervalSeconds": 0.2, "maxInFlight": 2,
                          "timeoutSeconds": 2, "retry": {"initialDelaySeconds": 0.1, "maxDelaySeconds": 0.5}}},
                       {"kind": "mqtt", "name": "broker", "config": {
                          "host": "127.0.0.1", "port": \(broker.port), "batchSize": 20, "ackTimeoutSeconds": 1,
                          "retry": {"initialDelaySeconds": 0.1, "maxDelaySeconds": 0.5}}}],
             "controlSocket": "\(directory.appendingPathComponent("control.sock").path)"}
            """.write(to: config, atomically: true, encoding: .utf8)

        var kills = 0, serverOutages = 0, brokerOutages = 0, deletions = 0
        for round in 0..<20 {
            let gateway = try healthgate.start(["run", "--config", config.path])
            try await Task.sleep(for: .milliseconds(Int64(random.next(in: 600...1800))))
            if random.chance(0.35) {
                server.stop()
                serverOutages += 1
            }
            if random.chance(0.35) {
                broker.stop()
                brokerOutages += 1
            }
            if random.chance(0.5), let victim = try await storedSampleUUIDs(store).randomElement(using: &random) {
                let deleted = try await healthgate.run(["delete", "--yes", "--id", victim, "--db", store])
                if deleted.status == 0 { deletions += 1 }
            }
            try await Task.sleep(for: .milliseconds(Int64(random.next(in: 200...1200))))
            gateway.send(SIGKILL)
            _ = try await gateway.waitForExit(timeout: .seconds(30))
            kills += 1
            // The receivers come back at random moments, while no gateway runs or in the next run.
            if !MosquittoBroker.accepts(port: broker.port), random.chance(0.6) || round == 19 { try await broker.start() }
            if !MosquittoBroker.accepts(port: server.port), random.chance(0.6) || round == 19 { try server.start() }
        }
        if !MosquittoBroker.accepts(port: broker.port) { try await broker.start() }
        if !MosquittoBroker.accepts(port: server.port) { try server.start() }
        // A graceful run: the sinks send what the store holds before they stop. The store closes
        // the series still open as it closes, after the sinks stopped: a run without sources
        // sends those last versions and writes nothing of its own.
        let final = try await healthgate.run(["run", "--config", config.path, "--duration", "6"], timeout: .seconds(120))
        XCTAssertEqual(final.status, 0, final.standardError.suffix(4000).description)
        let quiet = directory.appendingPathComponent("quiet.json")
        var settings = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: config)) as? [String: Any])
        settings["sources"] = []
        try JSONSerialization.data(withJSONObject: settings).write(to: quiet)
        let last = try await healthgate.run(["run", "--config", quiet.path, "--duration", "2"], timeout: .seconds(120))
        XCTAssertEqual(last.status, 0, last.standardError.suffix(4000).description)

        // The store: the latest version of every object, and every deletion.
        let stored = try HealthStore(path: store, access: .readOnly)
        let changes = try await stored.changes(since: 0, includingCorrelationMembers: false)
        let latest = try await stored.latestAnchor()
        for follower in ["repo", "broker"] {
            let cursor = try await stored.follower(follower)?.anchor
            XCTAssertEqual(cursor, latest, "\(follower) did not reach the store's latest anchor")
        }
        let objects = Dictionary(uniqueKeysWithValues: changes.added.map { ($0.id.uuidString, $0) })
        let tombstones = Set(changes.deleted.map(\.id.uuidString))
        // The straps' readings: most of them quantities of series.
        let readings = changes.added.reduce(0) { total, record in
            if case .quantitySeries(let series) = record { return total + series.count }
            return total + 1
        }
        XCTAssertGreaterThan(readings, 100)
        XCTAssertTrue(objects.values.contains { $0.kind == .quantitySeries }, "the heart rates were stored as no series")
        XCTAssertGreaterThan(tombstones.count, 0, "no deletion happened: the run tested none")

        // What the HTTP server accepted, applied in the order it was accepted.
        var http = Received()
        for request in server.requests() where request.method == "POST" && request.status == 200 {
            guard let body = request.body as? [String: Any] else { continue }
            for key in ["samples", "quantitySeries", "heartbeatSeries", "correlations", "workouts"] {
                for object in body[key] as? [[String: Any]] ?? [] { http.store(object) }
            }
            for deletion in body["deleted"] as? [[String: Any]] ?? [] {
                if let uuid = deletion["uuid"] as? String { http.delete(uuid) }
            }
        }
        // What the broker delivered to a subscriber that never missed a message.
        try await waitUntil(timeout: .seconds(20), "the recorder to receive every stored object") {
            let received = Set(recorder.messages.flatMap(\.uuids))
            return Set(objects.keys).isSubset(of: received) && tombstones.isSubset(of: received)
        }
        var mqtt = Received()
        for message in recorder.messages where message.topic.hasPrefix("healthgate/conv/") && !message.topic.hasSuffix("/status") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any] else { continue }
            if message.topic == "healthgate/conv/deleted" {
                if let uuid = object["uuid"] as? String { mqtt.delete(uuid) }
            } else {
                mqtt.store(object)
            }
        }

        let encoder = HealthJSON.makeEncoder()
        for (name, received) in [("the HTTP repository", http), ("the MQTT broker", mqtt)] {
            XCTAssertEqual(received.present, Set(objects.keys), "\(name) does not hold exactly what the store holds")
            XCTAssertTrue(tombstones.isSubset(of: received.deleted), "\(name) missed deletions: \(tombstones.subtracting(received.deleted))")
            let foreign = received.everything.subtracting(objects.keys).subtracting(tombstones)
            XCTAssertTrue(foreign.isEmpty, "\(name) got objects the store neither holds nor deleted: \(foreign)")
            // Each object in the store's version: the same JSON (keys sorted) as the store's record.
            var stale: [String] = []
            for (uuid, record) in objects {
                guard let object = received.objects[uuid] else { continue }
                let expected = try JSONSerialization.jsonObject(with: Data(try Self.healthJSON(record, encoder: encoder)))
                if !NSDictionary(dictionary: object).isEqual(expected) { stale.append(uuid) }
            }
            XCTAssertEqual(stale, [], "\(name) holds other versions than the store")
        }
        print(
            "convergence: \(kills) kills, \(serverOutages) server and \(brokerOutages) broker outages, \(deletions) deletions; "
                + "store: \(objects.count) objects, \(tombstones.count) tombstones; HTTP: \(http.messages) changes applied, "
                + "MQTT: \(mqtt.messages) messages")
    }

    /// What `healthgate delete --id` takes for the stored heart rates: a series' uuid for the
    /// readings it holds (a quantity's derived id is refused), a sample's own for the others.
    func storedSampleUUIDs(_ path: String) async throws -> [String] {
        guard FileManager.default.fileExists(atPath: path),
            let store = try? HealthStore(path: path, access: .readOnly)
        else { return [] }
        let uuids = try await store.samples(of: .heartRate).map { sample in
            if case .string(let series)? = sample.metadata[.series] { return series }
            return sample.id.uuidString
        }
        return Array(Set(uuids)).sorted()
    }

    static func healthJSON(_ record: HealthRecord, encoder: JSONEncoder) throws -> Data {
        switch record {
        case .quantity(let sample): try encoder.encode(sample)
        case .quantitySeries(let series): try encoder.encode(series)
        case .heartbeatSeries(let series): try encoder.encode(series)
        case .workout(let workout): try encoder.encode(workout)
        case .correlation(let correlation): try encoder.encode(correlation)
        }
    }
}
