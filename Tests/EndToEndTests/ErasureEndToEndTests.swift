import Foundation
import GatewayTesting
import HealthModel
import XCTest

/// Issue 77 through the real executable, a simulated strap and real receivers: `participant
/// erase Ana` runs in another process while her strap streams (readings wait in the store's 2 s
/// window) and its heartbeat series is open. Afterwards no reading of hers is stored, the
/// repository gets no Observation under her Patient after her deletions, the broker carries
/// nothing on her topics after the deletions' announcement, and no erased uuid comes back, also
/// after a restart.
final class ErasureEndToEndTests: TemporaryDirectoryTestCase {
    func testAnEraseHoldsForTheReadingsInFlightAndTheOpenSeries() async throws {
        let healthgate = try HealthgateExecutable()
        let receivers = try await RecordingReceivers.started(in: directory)
        defer { receivers.stop() }
        let (server, broker, recorder) = (receivers.server, receivers.broker, receivers.recorder)
        let config = directory.appendingPathComponent("config.json")
        let database = directory.appendingPathComponent("store.sqlite").path
        try """
            {"gatewayName": "home",
             "participants": [
               {"name": "Ana", "identifiers": {"fhirPatient": "Patient/ana"}},
               {"name": "Ben", "identifiers": {"fhirPatient": "Patient/ben"}}],
             "sources": [
               {"kind": "ble-heart-rate", "name": "straps", "config": {"transport": "simulated", "maxDevices": 1,
                  "simulation": {"heartRateMonitors": 1, "notificationsPerSecond": 4}}}],
             "store": {"path": "\(database)"},
             "sinks": [{"kind": "sqlite", "config": {"batchWindowSeconds": 2}},
                       {"kind": "http-repository", "name": "repo", "config": {
                          "url": "\(server.url)", "format": "fhir-r4", "batchIntervalSeconds": 0.2,
                          "patientReference": "Patient/nobody"}},
                       {"kind": "mqtt", "name": "broker", "config": {"host": "127.0.0.1", "port": \(broker.port)}}]}
            """.write(to: config, atomically: true, encoding: .utf8)
        var gateway = try await healthgate.startServing(["run", "--config", config.path])
        let assigned = try await healthgate.run(["participant", "assign", "healthgate/SIM-HRM-0001", "Ana"])
        XCTAssertEqual(assigned.status, 0, assigned.standardError)
        // Her readings reach the receivers; a heartbeat series is open; readings wait in the window.
        try await Task.sleep(for: .seconds(6))
        let sentBefore = AttributionEndToEndTests.observations(server.requests()).filter { $0.subject == "Patient/ana" }
        XCTAssertFalse(sentBefore.isEmpty, "Ana's readings were sent before the erase")

        let erase = try await healthgate.run(["participant", "erase", "Ana", "--yes", "--format", "json", "--config", config.path])
        XCTAssertEqual(erase.status, 0, erase.standardError)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(erase.standardOutput.utf8)) as? [[String: String]])
        let erased = Set(rows.compactMap { $0["uuid"]?.lowercased() })
        XCTAssertTrue(rows.contains { $0["kind"] == "heartbeatSeries" }, "the open series was erased: \(rows)")
        // The window's readings, the series' next versions, dated before the erase, arrive now.
        try await Task.sleep(for: .seconds(5))
        try await gateway.terminate()
        gateway = try healthgate.start(["run", "--config", config.path, "--duration", "4"])
        let second = try await gateway.waitForExit()
        XCTAssertEqual(second.status, 0, second.standardError)

        // The store: nothing of Ana's, no erased uuid.
        let export = directory.appendingPathComponent("ana.json")
        let exported = try await healthgate.run(["participant", "export", "Ana", "--output", export.path, "--config", config.path])
        XCTAssertEqual(exported.status, 0, exported.standardError)
        XCTAssertTrue(exported.standardError.contains("Ana: 0 records"), exported.standardError)
        let stored = try runProcessOutput(URL(fileURLWithPath: "/usr/bin/sqlite3"), [database, """
            SELECT lower(hex(uuid)) FROM samples UNION ALL SELECT lower(hex(uuid)) FROM heartbeat_series
            UNION ALL SELECT lower(hex(uuid)) FROM quantity_series
            """])
        XCTAssertEqual(stored.status, 0, stored.output)
        let storedIDs = Set(stored.output.split(separator: "\n").map { String($0) })
        let erasedHex = Set(erased.map { $0.replacingOccurrences(of: "-", with: "") })
        XCTAssertEqual(storedIDs.intersection(erasedHex), [], "no erased uuid back in the store")

        // The repository: after the first DELETE, no Observation under Ana, and no erased uuid again.
        let requests = server.requests()
        let firstDelete = try XCTUnwrap(requests.firstIndex { request in
            ((request.body as? [String: Any])?["entry"] as? [[String: Any]] ?? []).contains {
                ($0["request"] as? [String: Any])?["method"] as? String == "DELETE"
            }
        }, "the erase reached the repository")
        let after = AttributionEndToEndTests.observations(Array(requests[(firstDelete + 1)...]))
        XCTAssertFalse(after.isEmpty, "the strap's readings after the erase were sent")
        XCTAssertEqual(after.filter { $0.subject == "Patient/ana" }.map(\.id), [], "no Observation under Ana after her deletions")
        XCTAssertEqual(Set(after.map(\.id)).intersection(erased), [], "no erased uuid sent again")

        // The broker: nothing on Ana's topics after the deletions were announced.
        let messages = recorder.messages
        let announced = try XCTUnwrap(messages.firstIndex { $0.topic == "healthgate/home/deleted" }, "the erase announced")
        let anasTopics = messages[(announced + 1)...].filter { $0.topic.hasPrefix("healthgate/home/people/Ana/") && !$0.payload.isEmpty }
        XCTAssertEqual(anasTopics.map(\.topic), [], "no reading published for Ana after her deletions")
        let published = messages[(announced + 1)...].filter { $0.topic != "healthgate/home/deleted" }.flatMap(\.uuids)
        XCTAssertEqual(Set(published.map { $0.lowercased() }).intersection(erased), [], "no erased uuid published again")
    }
}
