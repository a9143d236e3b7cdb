import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// A person's data on request, through the real executable: `participant export` writes all of
/// Ana's and nothing of Ben's, readable by the user alone; `participant erase` deletes all of
/// Ana's in one transaction, leaving tombstones the remote sinks send as deletions, and forgets
/// her assignments; Ben's stays.
final class PersonsDataEndToEndTests: StoreTestCase {
    func testExportThenEraseOnePersonsData() async throws {
        let healthgate = try HealthgateExecutable()
        let ids = makeIDs()
        let ana: Metadata = [.person: .string("Ana")], ben: Metadata = [.person: .string("Ben")]
        let cuff = Device(name: "Cuff", localIdentifier: "28:FF:B2:00:00:01")
        func member(_ type: QuantityType, _ value: Double) throws -> QuantitySample {
            try QuantitySample(
                id: ids.next(), type: type, quantity: Quantity(value, .millimeterOfMercury), start: at(30), end: at(30), device: cuff,
                metadata: ana)
        }
        let pressure = try CorrelationSample.bloodPressure(
            id: ids.next(), systolic: try member(.bloodPressureSystolic, 121), diastolic: try member(.bloodPressureDiastolic, 79),
            device: cuff, metadata: ana)
        let workout = Workout(
            id: ids.next(), activityType: .cycling, startDate: at(0), endDate: at(60), duration: 60,
            metadata: [.participant: .string("Ana")])
        let records: [HealthRecord] = [
            .quantity(try heartRate(ids, 70, at: 1, metadata: ana)), .quantity(try heartRate(ids, 90, at: 2, metadata: ben)),
            .correlation(pressure), .workout(workout),
        ]
        let store = try HealthStore(path: path)
        try await store.write(records)
        try store.storeParticipantAssignment(ParticipantAssignment(device: "AA:BB:CC:DD:EE:FF", participant: "Ana"), at: at(0))
        try store.storeParticipantAssignment(ParticipantAssignment(device: "11:22:33:44:55:66", participant: "Ben"), at: at(0))
        await store.close()

        let file = directory.appendingPathComponent("ana.json")
        let exported = try await healthgate.run(["participant", "export", "Ana", "--output", file.path, "--db", path])
        XCTAssertEqual(exported.status, 0, exported.standardError)
        XCTAssertTrue(exported.standardError.contains("Ana: 3 records"), exported.standardError)
        let mode = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int)
        XCTAssertEqual(mode, 0o600)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        XCTAssertEqual(object["person"] as? String, "Ana")
        let kinds = try XCTUnwrap(object["records"] as? [[String: Any]]).compactMap { $0["kind"] as? String }
        XCTAssertEqual(kinds.sorted(), ["correlation", "quantitySeries", "workout"], "her heart rate (as its series), her cuff's reading, her workout")
        let text = try String(contentsOf: file, encoding: .utf8)
        XCTAssertFalse(text.contains("\"Ben\""), "nothing of Ben's")

        // The FHIR form: her Observations under her Patient, valid R4; the workout left out, and said.
        let configuration = directory.appendingPathComponent("healthgate.json")
        try Data(#"{"participants": [{"name": "Ana", "identifiers": {"fhirPatient": "Patient/ana-7"}}]}"#.utf8).write(to: configuration)
        for (options, subject) in [(["--config", configuration.path], "Patient/ana-7"), ([], "urn:uuid:")] {
            let fhirFile = directory.appendingPathComponent("ana-fhir.json")
            let fhir = try await healthgate.run(
                ["participant", "export", "Ana", "--format", "fhir", "--output", fhirFile.path, "--db", path] + options)
            XCTAssertEqual(fhir.status, 0, fhir.standardError)
            XCTAssertTrue(fhir.standardError.contains("Ana: 2 Observations"), fhir.standardError)
            XCTAssertTrue(fhir.standardError.contains("1 workout or heartbeat series left out"), fhir.standardError)
            let bundle = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: fhirFile)) as? [String: Any])
            let entries = try XCTUnwrap(bundle["entry"] as? [[String: Any]]).compactMap { $0["resource"] as? [String: Any] }
            let subjects = entries.compactMap { ($0["subject"] as? [String: Any])?["reference"] as? String }
            XCTAssertEqual(subjects.count, 2)
            XCTAssertTrue(subjects.allSatisfy { $0.hasPrefix(subject) }, "\(subjects)")
            XCTAssertEqual(entries.filter { $0["resourceType"] as? String == "Patient" }.count, options.isEmpty ? 1 : 0)
            let validation = try await TestPython.run("plugins/HTTPRepository/Fixtures/validate_payloads.py", ["fhir-export", fhirFile.path])
            XCTAssertEqual(validation.output.trimmingCharacters(in: .whitespacesAndNewlines), "ok 2", validation.errors)
        }

        let refused = try await healthgate.run(["participant", "erase", "Ana", "--db", path])
        XCTAssertEqual(refused.status, 64, "no terminal and no --yes: \(refused.standardError)")
        let erased = try await healthgate.run(["participant", "erase", "Ana", "--yes", "--db", path, "--format", "json"])
        XCTAssertEqual(erased.status, 0, erased.standardError)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(erased.standardOutput.utf8)) as? [[String: String]])
        XCTAssertEqual(
            rows.compactMap { $0["kind"] }.sorted(), ["correlation", "quantity", "quantity", "quantitySeries", "workout"],
            "the correlation with both members")

        let reader = try HealthStore(path: path, access: .readOnly)
        let left = try await reader.samples(of: .heartRate)
        XCTAssertEqual(left.map { HealthRecord.quantity($0).person }, ["Ben"])
        let workouts = try await reader.workouts()
        XCTAssertEqual(workouts, [])
        let changes = try await reader.changes(since: 0)
        XCTAssertEqual(Set(changes.deleted.map(\.id)), Set([pressure.id, workout.id] + pressure.objects.map(\.id)).union(
            changes.deleted.filter { $0.kind == .quantitySeries }.map(\.id)))
        XCTAssertEqual(changes.deleted.count, 5, "a tombstone each, which every remote sink sends as a deletion")
        XCTAssertEqual(try reader.storedParticipantAssignments().map(\.participant), ["Ben"])
        XCTAssertEqual(try reader.storedWearIntervals().map(\.person), ["Ben"])
    }
}
