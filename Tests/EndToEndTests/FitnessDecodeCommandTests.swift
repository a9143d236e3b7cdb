import Foundation
import GatewayTesting
import XCTest

/// `healthgate decode` for the fitness characteristics, run as the built executable against the
/// FitnessEquipment plugin's fixtures: exactly the documented keys, in SI units, null when
/// absent; invalid payloads exit 65 naming the field.
final class FitnessDecodeCommandTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("plugins/FitnessEquipment/Fixtures")

    /// Each subcommand, its fixture file, and the keys it prints.
    static let commands: [(String, String, Set<String>)] = [
        (
            "csc-measurement", "csc-measurement.json",
            ["cumulativeWheelRevolutions", "lastWheelEventTime", "cumulativeCrankRevolutions", "lastCrankEventTime"]
        ),
        (
            "cycling-power-measurement", "cycling-power-measurement.json",
            [
                "instantaneousPower", "pedalPowerBalance", "accumulatedTorque", "cumulativeWheelRevolutions",
                "lastWheelEventTime", "cumulativeCrankRevolutions", "lastCrankEventTime",
            ]
        ),
        ("treadmill-data", "treadmill-data.json", ["instantaneousSpeed", "totalDistance", "inclination"]),
        (
            "indoor-bike-data", "indoor-bike-data.json",
            ["instantaneousSpeed", "instantaneousCadence", "instantaneousPower", "totalDistance"]
        ),
        ("rower-data", "rower-data.json", ["strokeRate", "strokeCount", "totalDistance", "instantaneousPower"]),
    ]

    struct Valid: Decodable {
        var name: String
        var hex: String
        var expected: [String: Double?]
    }

    func testEveryFixtureDecodesToExactlyTheDocumentedKeys() async throws {
        let healthgate = try HealthgateExecutable()
        var runs = 0
        for (command, file, keys) in Self.commands {
            let fixtures = try DecodeFixtureFile<Valid>.load(file, in: Self.fixtures)
            for fixture in fixtures.valid {
                let result = try await healthgate.run(["decode", command, fixture.hex])
                runs += 1
                XCTAssertEqual(result.status, 0, "\(command) \(fixture.name): \(result.standardError)")
                XCTAssertTrue(result.standardOutput.hasSuffix("}\n"), "one JSON object and a newline")
                let object = try XCTUnwrap(
                    JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any],
                    result.standardOutput)
                XCTAssertEqual(Set(object.keys), keys, "\(command) \(fixture.name)")
                XCTAssertEqual(Set(fixture.expected.keys), keys, "the fixture lists every key: \(fixture.name)")
                for (key, expected) in fixture.expected {
                    switch (object[key], expected) {
                    case (is NSNull, nil): break
                    case (let value as NSNumber, let number?):
                        XCTAssertEqual(value.doubleValue, number, accuracy: 1e-9, "\(command) \(fixture.name): \(key)")
                    default:
                        XCTFail("\(command) \(fixture.name): \(key) is \(String(describing: object[key])), expected \(String(describing: expected))")
                    }
                }
            }
            runs += try await fixtures.assertInvalidRefused(by: healthgate, command: command)
        }
        XCTAssertGreaterThan(runs, 40)
    }

    func testIntegersPrintAsIntegersAndAbsentFieldsAsNull() async throws {
        let healthgate = try HealthgateExecutable()
        let csc = try await healthgate.run(["decode", "csc-measurement", "0139300000E803"])
        XCTAssertEqual(
            csc.standardOutput,
            #"{"cumulativeCrankRevolutions":null,"cumulativeWheelRevolutions":12345,"lastCrankEventTime":null,"lastWheelEventTime":0.9765625}"#
                + "\n")
        let rower = try await healthgate.run(["decode", "rower-data", "00 02 3C 96 00 8C"])
        XCTAssertEqual(
            rower.standardOutput,
            #"{"instantaneousPower":null,"strokeCount":150,"strokeRate":30,"totalDistance":null}"# + "\n")
        // Issue #45: typed without quotes, the payload with spaces is the same payload (it was
        // refused though `decode --help` allows spaces); a word that is not hex still is not.
        let unquoted = try await healthgate.run(["decode", "rower-data", "00", "02", "3C", "96", "00", "8C"])
        XCTAssertEqual(unquoted.status, 0, unquoted.standardError)
        XCTAssertEqual(unquoted.standardOutput, rower.standardOutput)
        let word = try await healthgate.run(["decode", "rower-data", "00", "02", "extra"])
        XCTAssertEqual(word.status, 65, word.standardError)
        XCTAssertTrue(word.standardError.contains("not a hex payload"), word.standardError)
    }

    func testBadHexAndMissingArgumentsAreRejected() async throws {
        let healthgate = try HealthgateExecutable()
        try await healthgate.assertRun(["decode", "indoor-bike-data", "0x0G"], exits: 65, saying: "not a hex payload")
        let missing = try await healthgate.run(["decode", "treadmill-data"])
        XCTAssertEqual(missing.status, 64)
        try await healthgate.assertRun(["decode", "cycling-power-measurement", ""], exits: 65, saying: "field flags at offset 0")
    }
}
