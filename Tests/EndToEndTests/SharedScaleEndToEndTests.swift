import Foundation
import GatewayTesting
import HealthModel
import XCTest

/// Issue 77 through the real executable: a body composition scale two people share by weight
/// (no user index: Ana about 52 kg, Ben about 71 kg) sends each weighing's weight and then its
/// body composition in a second notification. Every body fat and lean mass reading is stored
/// as the person its weighing is, none as nobody's.
final class SharedScaleEndToEndTests: TemporaryDirectoryTestCase {
    func testEveryReadingOfAWeighingIsItsPersons() async throws {
        let healthgate = try HealthgateExecutable()
        let config = directory.appendingPathComponent("config.json")
        try """
            {"participants": [
               {"name": "Ana", "profile": {"weightKilograms": 52}, "sharedDevices": [{"device": "02:00:00:00:03:01"}]},
               {"name": "Ben", "profile": {"weightKilograms": 71}, "sharedDevices": [{"device": "02:00:00:00:03:01"}]}],
             "sources": [
               {"kind": "ble-health", "name": "scale", "config": {"transport": "simulated",
                  "simulation": {"scales": 1, "cuffs": 0, "thermometers": 0, "oximeters": 0, "glucoseMeters": 0,
                    "measurementIntervalSeconds": 1}}}],
             "store": {"path": "\(directory.appendingPathComponent("store.sqlite").path)"},
             "sinks": [{"kind": "sqlite", "config": {"batchWindowSeconds": 0.2}}]}
            """.write(to: config, atomically: true, encoding: .utf8)
        let run = try await healthgate.run(["run", "--config", config.path, "--duration", "6"])
        XCTAssertEqual(run.status, 0, run.standardError)

        func count(_ type: String, _ options: [String] = []) async throws -> Int {
            let listed = try await healthgate.run(
                ["query", "samples", "--type", type, "--format", "json", "--config", config.path] + options)
            XCTAssertEqual(listed.status, 0, listed.standardError)
            return (try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [Any])?.count ?? -1
        }
        let weighings = try await count("bodyMass")
        XCTAssertGreaterThan(weighings, 2, "the scale weighed")
        let bensWeighings = try await count("bodyMass", ["--participant", "Ben"])
        XCTAssertEqual(bensWeighings, weighings, "72.4 kg is Ben's")
        for type in ["bodyFatPercentage", "leanBodyMass"] {
            let all = try await count(type)
            XCTAssertGreaterThan(all, 2, "the scale sent \(type)")
            let bens = try await count(type, ["--participant", "Ben"])
            XCTAssertEqual(bens, all, "every \(type) reading is its weighing's person's")
            let nobodys = try await count(type, ["--unattributed"])
            XCTAssertEqual(nobodys, 0, "no \(type) reading is nobody's")
        }
    }
}
