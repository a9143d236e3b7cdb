import Foundation
import GatewayTesting
import HealthModel
import XCTest

/// Issue 65 through the real executable, its simulated devices and real receivers: two people
/// share a Bluetooth scale with user slots (its user 1 is Ana's), a cuff with user buttons (1
/// Ana's, 2 Ben's) and a Mi scale without them (told apart by weight: Ben's is near its 71 kg),
/// and swap straps mid-run; a second scale is nobody's. Every FHIR Observation the recording
/// repository receives names the right Patient, and the broker's per-person topics carry each
/// one's readings; the second scale's weighings are held from the repository (no subject) until
/// `participant attribute` gives them to Ben, then sent under his Patient; `participant erase
/// Ana` reaches the repository and the broker as deletions.
final class AttributionEndToEndTests: TemporaryDirectoryTestCase {
    func testEveryReadingReachesTheReceiversUnderItsPerson() async throws {
        let healthgate = try HealthgateExecutable()
        let receivers = try await RecordingReceivers.started(in: directory)
        defer { receivers.stop() }
        let (server, broker, recorder) = (receivers.server, receivers.broker, receivers.recorder)
        let config = directory.appendingPathComponent("config.json")
        try """
            {"gatewayName": "home",
             "participants": [
               {"name": "Ana", "devices": ["healthgate/SIM-HRM-0001"], "profile": {"weightKilograms": 52},
                "sharedDevices": [{"device": "02:00:00:00:03:01", "userIndex": 1}, {"device": "C8:47:8C:00:00:00"},
                                  {"device": "02:00:00:00:04:01", "userIndex": 1}],
                "identifiers": {"fhirPatient": "Patient/ana"}},
               {"name": "Ben", "devices": ["healthgate/SIM-HRM-0002"], "profile": {"weightKilograms": 71},
                "sharedDevices": [{"device": "02:00:00:00:03:01", "userIndex": 2}, {"device": "C8:47:8C:00:00:00"},
                                  {"device": "02:00:00:00:04:01", "userIndex": 2}],
                "identifiers": {"fhirPatient": "Patient/ben"}}],
             "sources": [
               {"kind": "ble-heart-rate", "name": "straps", "config": {"transport": "simulated", "maxDevices": 2,
                  "simulation": {"heartRateMonitors": 2, "notificationsPerSecond": 2}}},
               {"kind": "ble-health", "name": "scale", "config": {"transport": "simulated",
                  "simulation": {"scales": 2, "cuffs": 1, "thermometers": 0, "oximeters": 0, "glucoseMeters": 0,
                    "measurementIntervalSeconds": 1}}},
               {"kind": "ble-mi-scale", "name": "mi", "config": {"transport": "simulated",
                  "simulation": {"devices": 1, "advertisementsPerSecond": 20}}}],
             "store": {"path": "\(directory.appendingPathComponent("store.sqlite").path)"},
             "sinks": [{"kind": "sqlite", "config": {"batchWindowSeconds": 0.2}},
                       {"kind": "http-repository", "name": "repo", "config": {
                          "url": "\(server.url)", "format": "fhir-r4", "batchIntervalSeconds": 0.2}},
                       {"kind": "mqtt", "name": "broker", "config": {"host": "127.0.0.1", "port": \(broker.port)}}]}
            """.write(to: config, atomically: true, encoding: .utf8)
        var gateway = try await healthgate.startServing(["run", "--config", config.path])
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
        let observations = Self.observations(server.requests())
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
        // Blood pressure (85354-9): the cuff's user 1 Ana, user 2 Ben, in turn.
        XCTAssertEqual(subjects("85354-9", "SIM-CUFF-0001"), ["Patient/ana", "Patient/ben"])
        // The second scale is nobody's: held from the repository, which has no patientReference.
        XCTAssertEqual(subjects("29463-7", "SIM-SCALE-0002"), [])

        // MQTT: each person's topic carries their readings.
        let topics = Set(recorder.messages.map(\.topic))
        for topic in ["healthgate/home/people/Ana/heartRate", "healthgate/home/people/Ben/heartRate",
                      "healthgate/home/people/Ana/bodyMass", "healthgate/home/people/Ben/bodyMass",
                      "healthgate/home/people/Ana/bloodPressure", "healthgate/home/people/Ben/bloodPressure"] {
            XCTAssertTrue(topics.contains(topic), "\(topic) in \(topics.sorted())")
        }
        // The second scale's weighings, unattributed, given to Ben: sent under his Patient.
        let nobodys = try await healthgate.run(
            ["query", "samples", "--type", "bodyMass", "--unattributed", "--format", "json", "--config", config.path])
        XCTAssertEqual(nobodys.status, 0, nobodys.standardError)
        let held = (try JSONSerialization.jsonObject(with: Data(nobodys.standardOutput.utf8)) as? [[String: Any]] ?? [])
            .compactMap { $0["uuid"] as? String }
        XCTAssertFalse(held.isEmpty, "the second scale weighed")
        let attributed = try await healthgate.run(
            ["participant", "attribute", "Ben", "--yes", "--format", "json", "--config", config.path] + held.flatMap { ["--id", $0] })
        XCTAssertEqual(attributed.status, 0, attributed.standardError)
        let versions = Set((try JSONSerialization.jsonObject(with: Data(attributed.standardOutput.utf8)) as? [[String: String]] ?? [])
            .compactMap { $0["after"]?.lowercased() })
        XCTAssertEqual(versions.count, held.count, attributed.standardOutput)
        let sentBefore = server.requests().count
        gateway = try healthgate.start(["run", "--config", config.path, "--duration", "3"])
        let third = try await gateway.waitForExit()
        XCTAssertEqual(third.status, 0, third.standardError)
        let sent = Self.observations(Array(server.requests().dropFirst(sentBefore))).filter { versions.contains($0.id) }
        XCTAssertEqual(Set(sent.map(\.id)), versions, "each held weighing sent once attributed")
        XCTAssertEqual(Set(sent.map(\.subject)), ["Patient/ben"])

        // Erase: everything of Ana's the repository holds is deleted, and the broker told.
        let anas = Set(Self.observations(server.requests()).filter { $0.subject == "Patient/ana" }.map(\.id))
        let erased = try await healthgate.run(["participant", "erase", "Ana", "--yes", "--config", config.path])
        XCTAssertEqual(erased.status, 0, erased.standardError)
        let beforeErase = server.requests().count
        gateway = try healthgate.start(["run", "--config", config.path, "--duration", "3"])
        let fourth = try await gateway.waitForExit()
        XCTAssertEqual(fourth.status, 0, fourth.standardError)
        var deleted = Set<String>()
        for request in server.requests().dropFirst(beforeErase) {
            for entry in (request.body as? [String: Any])?["entry"] as? [[String: Any]] ?? [] {
                guard let call = entry["request"] as? [String: Any], call["method"] as? String == "DELETE",
                    let url = call["url"] as? String, url.hasPrefix("Observation/") else { continue }
                deleted.insert(String(url.dropFirst("Observation/".count)))
            }
        }
        XCTAssertFalse(anas.isEmpty)
        XCTAssertEqual(anas.subtracting(deleted), [], "every Observation of Ana's deleted at the repository")
        let announced = Set(recorder.messages.filter { $0.topic == "healthgate/home/deleted" }.flatMap(\.uuids).map { $0.lowercased() })
        XCTAssertEqual(anas.subtracting(announced), [], "and announced on the broker's deleted topic")
    }

    struct Observation { var id: String; var code: String; var device: String; var subject: String; var start: Date; var end: Date }

    /// The Observations PUT in `requests`' Bundles.
    static func observations(_ requests: [RecordingServer.Request]) -> [Observation] {
        var observations: [Observation] = []
        for request in requests {
            for entry in (request.body as? [String: Any])?["entry"] as? [[String: Any]] ?? [] {
                guard let resource = entry["resource"] as? [String: Any] else { continue }
                let code = (((resource["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["code"] as? String) ?? "?"
                let device = (((resource["contained"] as? [[String: Any]])?.first?["identifier"] as? [[String: Any]])?.first?["value"] as? String) ?? "?"
                let subject = (resource["subject"] as? [String: Any])?["reference"] as? String ?? "?"
                let period = resource["effectivePeriod"] as? [String: String]
                let start = (period?["start"] ?? resource["effectiveDateTime"] as? String).flatMap(RFC3339.date(from:)) ?? .distantPast
                let end = (period?["end"] ?? resource["effectiveDateTime"] as? String).flatMap(RFC3339.date(from:)) ?? .distantPast
                observations.append(Observation(
                    id: resource["id"] as? String ?? "?", code: code, device: device, subject: subject, start: start, end: end))
            }
        }
        return observations
    }
}
