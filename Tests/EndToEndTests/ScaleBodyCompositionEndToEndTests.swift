import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// A body composition scale's weighings in the real executable: `healthgate run` gives the
/// scale's samples to the participant a stored run-time assignment gave it to, with body fat and
/// lean body mass from that participant's profile; a scale Ben lists in `sharedDevices` gives its
/// weighings to him, and his incomplete profile gives body mass only.
final class ScaleBodyCompositionEndToEndTests: XCTestCase {
    func testTheAssignedParticipantsBodyComposition() async throws {
        let healthgate = try HealthgateExecutable()
        let path = healthgate.root.appendingPathComponent("scale.sqlite").path
        // The assignment `healthgate participant assign` stores, made before this start.
        let store = try HealthStore(path: path)
        try store.storeParticipantAssignment(ParticipantAssignment(device: "C8:47:8C:00:00:00", participant: "Ana"), at: Date())
        await store.close()
        // Two simulated scales (C8:47:8C:00:00:00 and …:01), a weighing each 1.2 s at 50 advertisements/s.
        let configuration = healthgate.root.appendingPathComponent("config.json")
        try Data(
            #"""
            {"store": {"path": "\#(path)"},
             "participants": [
               {"name": "Ana", "profile": {"biologicalSex": "female", "dateOfBirth": "1990-04-01", "heightMeters": 1.68}},
               {"name": "Ben", "profile": {"weightKilograms": 71}, "sharedDevices": [{"device": "C8:47:8C:00:00:01"}]}],
             "sources": [{"kind": "ble-mi-scale", "name": "scale",
                          "config": {"transport": "simulated", "simulation": {"devices": 2, "advertisementsPerSecond": 50}}}],
             "sinks": [{"kind": "sqlite"}]}
            """#.utf8
        ).write(to: configuration)
        let run = try await healthgate.run(["run", "--config", configuration.path, "--duration", "4"])
        XCTAssertEqual(run.status, 0, run.standardError)

        let reader = try HealthStore(path: path, access: .readOnly)
        let masses = try await reader.samples(of: .bodyMass)
        let fat = try await reader.samples(of: .bodyFatPercentage)
        let lean = try await reader.samples(of: .leanBodyMass)
        let anas = masses.filter { $0.device?.localIdentifier == "C8:47:8C:00:00:00" }
        let others = masses.filter { $0.device?.localIdentifier == "C8:47:8C:00:00:01" }
        XCTAssertFalse(anas.isEmpty, run.standardError)
        XCTAssertFalse(others.isEmpty, run.standardError)
        XCTAssertEqual(fat.count, anas.count, "one body fat per weighing of Ana's scale, none for the other")
        XCTAssertEqual(lean.count, anas.count)
        let participant = MetadataKey.person
        XCTAssertEqual(Set((anas + fat + lean).map { $0.metadata[participant] }), [.string("Ana")])
        XCTAssertEqual(Set(others.map { $0.metadata[participant] }), [.string("Ben")])
        XCTAssertTrue(fat.allSatisfy { $0.device?.localIdentifier == "C8:47:8C:00:00:00" })
        for sample in fat {
            let mass = try XCTUnwrap(anas.first { $0.startDate == sample.startDate })
            let leanMass = try XCTUnwrap(lean.first { $0.startDate == sample.startDate })
            XCTAssertEqual(leanMass.quantity.value + mass.quantity.value * sample.quantity.value / 100, mass.quantity.value, accuracy: 1e-6)
            XCTAssertTrue((10...40).contains(sample.quantity.value), "\(sample.quantity.value) %")
        }
        // The other scale is shared by Ben alone: his.
        let lines = run.standardError.split(separator: "\n").filter { $0.contains("body fat not computed") }
        XCTAssertEqual(lines.count, 1, run.standardError)
        XCTAssertTrue(lines.first?.contains("C8:47:8C:00:00:01") ?? false, run.standardError)
        XCTAssertTrue(lines.first?.contains("Ben's profile lacks biologicalSex, dateOfBirth, heightMeters") ?? false, run.standardError)
    }
}
