import Foundation
import GatewayTesting
import HealthModel
import XCTest

/// Issue 65 through the real executable, its simulated devices and real receivers: two people
/// share a Bluetooth scale with user slots (its user 1 is Ana's) and a Mi scale without them
/// (told apart by weight: Ben's is near its 71 kg), and swap straps mid-run. Every FHIR
/// Observation the recording repository receives names the right Patient, and the broker's
/// per-person topics carry each one's readings.
final class AttributionEndToEndTests: TemporaryDirectoryTestCase {
    func testEveryReadingReachesTheReceiversUnderItsPerson() async throws {
        let healthgate = try HealthgateExecutable()
        let server = RecordingServer(directory: directory)
        try server.start()
        defer { server.stop() }
        let broker = try MosquittoBroker(directory: directory)
        try await broker.start()
        defer { broker.stop() }
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let config = directory.appendingPathComponent("config.json")
        try """
            {"gatewayName": "home",
             "participants": [
               {"name": "Ana", "devices": ["healthgate/SIM-HRM-0001"], "profile": {"weightKilograms": 52},
                "sharedDevices": [{"device": "02:00:00:00:03:01", "userIndex": 1}, {"device": "C8:47:8C:00:00:00"}],
                "identifiers": {"fhirPatient": "Patient/ana"}},
               {"name": "Ben", "devices": ["healthgate/SIM-HRM-0002"], "profile": {"weightKilograms": 71},
                "sharedDevices": [{"device": "02:00:00:00:03:01", "userIndex": 2}, {"device": "C8:47:8C:00:00:00"}],
                "identifiers": {"fhirPatient": "Patient/ben"}}],
             "sources": [
               {"kind": "ble-heart-rate", "name": "straps", "config": {"transport": "simulated", "maxDevices": 2,
                  "simulation": {"heartRateMonitors": 2, "notificationsPerSecond": 2}}},
               {"kind": "ble-health", "name": "scale", "config": {"transport": "simulated",
                  "simulation": {"scales": 1, "cuffs": 0, "thermometers": 0, "oximeters": 0, "glucoseMeters": 0,
                    "measurementIntervalSeconds": 1}}},
               {"kind": "ble-mi-scale", "name": "mi", "config": {"transport": "simulated",
                  "simulation": {"devices": 1, "advertisementsPerSecond": 20}}}],
             "store": {"path": "\(directory.appendingPathComponent("store.sqlite").path)"},
             "sinks": [{"kind": "sqlite", "config": {"batchWindowSeconds": 0.2}},
                       {"kind": "http-repository", "name": "repo", "config": {
                          "url": "\(server.url)", "format": "fhir-r4", "batchIntervalSeconds": 0.2}},
                       {"kind": "mqtt", "name": "broker", "config": {"host": "127.0.0.1", "port": \(broker.port)}}]}
            """.write(to: config, atomically: true, encoding: .utf8)
        var gateway = try healthgate.start(["run", "--config", config.path])
        do {
            try await healthgate.waitForControlSocket()
        } catch {
            XCTFail("no control socket; the gateway said:\n\(gateway.standardError)")
            throw error
        }
        try await Task.sleep(for: .seconds(3))
        // The straps change hands.
        let handover = Date()
        for (strap, person) in [("healthgate/SIM-HRM-0001", "Ben"), ("healthgate/SIM-HRM-0002", "Ana")] {
            let assigned = try await healthgate.run(["participant", "assign", strap, person])
            XCTAssertEqual(assigned.status, 0, assigned.standardError)
        }
        let answered = Date()
        try await Task.sleep(for: .seconds(4))
        try await gateway.terminate()
        // Everything stored reaches the receivers: a short second run sends what the first left.
        gateway = try healthgate.start(["run", "--config", config.path, "--duration", "3"])
        let second = try await gateway.waitForExit()
        XCTAssertEqual(second.status, 0, second.standardError)

        // FHIR: every Observation under one of the two Patients, each by its rule.
        struct Observation { var code: String; var device: String; var subject: String; var start: Date; var end: Date }
        var observations: [Observation] = []
        for request in server.requests() {
            for entry in (request.body as? [String: Any])?["entry"] as? [[String: Any]] ?? [] {
                guard let resource = entry["resource"] as? [String: Any] else { continue }
                let code = (((resource["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["code"] as? String) ?? "?"
                let device = (((resource["contained"] as? [[String: Any]])?.first?["identifier"] as? [[String: Any]])?.first?["value"] as? String) ?? "?"
                let subject = (resource["subject"] as? [String: Any])?["reference"] as? String ?? "?"
                let period = resource["effectivePeriod"] as? [String: String]
                let start = (period?["start"] ?? resource["effectiveDateTime"] as? String).flatMap(RFC3339.date(from:)) ?? .distantPast
                let end = (period?["end"] ?? resource["effectiveDateTime"] as? String).flatMap(RFC3339.date(from:)) ?? .distantPast
                observations.append(Observation(code: code, device: device, subject: subject, start: start, end: end))
            }
        }
        XCTAssertFalse(observations.isEmpty)
        XCTAssertEqual(Set(observations.map(\.subject)), ["Patient/ana", "Patient/ben"], "no Observation without its person")
        func subjects(_ code: String, _ device: String, _ selected: (Observation) -> Bool = { _ in true }) -> Set<String> {
            Set(observations.filter { $0.code == code && $0.device.contains(device) && selected($0) }.map(\.subject))
        }
        // Heart rate (LOINC 8867-4): strap 1 Ana's before the handover, Ben's after; strap 2 the other way.
        XCTAssertEqual(subjects("8867-4", "SIM-HRM-0001") { $0.end < handover }, ["Patient/ana"])
        XCTAssertEqual(subjects("8867-4", "SIM-HRM-0001") { $0.start > answered }, ["Patient/ben"])
        XCTAssertEqual(subjects("8867-4", "SIM-HRM-0002") { $0.end < handover }, ["Patient/ben"])
        XCTAssertEqual(subjects("8867-4", "SIM-HRM-0002") { $0.start > answered }, ["Patient/ana"])
        // Body weight (29463-7): the Bluetooth scale's user 1 is Ana; the Mi scale's 71 kg is Ben's.
        // (The scale reports a serial number: its Device's identifier; Ana lists it by its address.)
        XCTAssertEqual(subjects("29463-7", "SIM-SCALE-0001"), ["Patient/ana"])
        XCTAssertEqual(subjects("29463-7", "C8:47:8C:00:00:00"), ["Patient/ben"])

        // MQTT: each person's topic carries their readings.
        let topics = Set(recorder.messages.map(\.topic))
        for topic in ["healthgate/home/people/Ana/heartRate", "healthgate/home/people/Ben/heartRate",
                      "healthgate/home/people/Ana/bodyMass", "healthgate/home/people/Ben/bodyMass"] {
            XCTAssertTrue(topics.contains(topic), "\(topic) in \(topics.sorted())")
        }
        // No weighing was left unattributed.
        let nobodys = try await healthgate.run(
            ["query", "samples", "--type", "bodyMass", "--unattributed", "--format", "json", "--config", config.path])
        XCTAssertEqual(nobodys.status, 0, nobodys.standardError)
        let rows = try JSONSerialization.jsonObject(with: Data(nobodys.standardOutput.utf8)) as? [Any]
        XCTAssertEqual(rows?.count, 0, nobodys.standardOutput)
    }
}
