import Foundation
import GatewayTesting
import XCTest

/// `healthgate decode` for the health-profile characteristics, run as the built executable
/// against the HealthDevices plugin's published fixtures: exactly the documented keys, in the
/// units of the samples they become, null when absent or special; invalid payloads exit 65.
final class ClinicalDecodeCommandTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("plugins/HealthDevices/Fixtures")

    static let commands: [(String, String, Set<String>)] = [
        ("weight-measurement", "weight-measurement.json", ["weight", "bmi", "height", "userID", "unit", "timestamp"]),
        (
            "body-composition-measurement", "body-composition-measurement.json",
            [
                "bodyFatPercentage", "weight", "height", "userID", "unit", "timestamp", "basalMetabolism", "musclePercentage",
                "muscleMass", "fatFreeMass", "softLeanMass", "bodyWaterMass", "impedance", "multiplePacket",
            ]
        ),
        (
            "blood-pressure-measurement", "blood-pressure-measurement.json",
            ["systolic", "diastolic", "meanArterialPressure", "pulseRate", "userID", "measurementStatus", "unit", "timestamp"]
        ),
        ("temperature-measurement", "temperature-measurement.json", ["temperature", "unit", "temperatureType", "timestamp"]),
        (
            "plx-spot-check", "plx-spot-check.json",
            ["oxygenSaturation", "pulseRate", "pulseAmplitudeIndex", "measurementStatus", "deviceAndSensorStatus", "timestamp"]
        ),
        (
            "glucose-measurement", "glucose-measurement.json",
            [
                "sequenceNumber", "concentration", "unit", "timeOffset", "timestamp", "baseTime", "type", "sampleLocation",
                "sensorStatus", "contextFollows",
            ]
        ),
    ]

    struct Valid: Decodable {
        var name: String
        var hex: String
    }

    func testEveryFixtureDecodesToExactlyTheDocumentedKeys() async throws {
        let healthgate = try HealthgateExecutable()
        for (command, file, keys) in Self.commands {
            let fixtures = try DecodeFixtureFile<Valid>.load(file, in: Self.fixtures)
            for fixture in fixtures.valid {
                let result = try await healthgate.run(["decode", command, fixture.hex])
                XCTAssertEqual(result.status, 0, "\(command) \(fixture.name): \(result.standardError)")
                let object = try XCTUnwrap(
                    JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any],
                    result.standardOutput)
                XCTAssertEqual(Set(object.keys), keys, "\(command) \(fixture.name)")
            }
            _ = try await fixtures.assertInvalidRefused(by: healthgate, command: command)
        }
    }

    func testPrintedValues() async throws {
        let healthgate = try HealthgateExecutable()
        let thermometer = try await healthgate.run(["decode", "temperature-measurement", "06B00E00FEDC070C050B321B04"])
        XCTAssertEqual(
            thermometer.standardOutput,
            #"{"temperature":37.6,"temperatureType":"finger","timestamp":"2012-12-05T11:50:27-00:00","unit":"degC"}"# + "\n")
        // NaN mean arterial pressure, NRes pulse rate: null, never a number.
        let cuff = try await healthgate.run(["decode", "blood-pressure-measurement", "04 7800 5000 FF07 0008"])
        XCTAssertEqual(cuff.status, 0, cuff.standardError)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(cuff.standardOutput.utf8)) as? [String: Any])
        XCTAssertTrue(object["meanArterialPressure"] is NSNull)
        XCTAssertTrue(object["pulseRate"] is NSNull)
        XCTAssertEqual((object["systolic"] as? NSNumber)?.doubleValue, 120)
        let composition = try await healthgate.run(["decode", "body-composition-measurement", "4404E00001E82B9038"])
        XCTAssertEqual(
            composition.standardOutput,
            #"{"basalMetabolism":null,"bodyFatPercentage":22.4,"bodyWaterMass":null,"fatFreeMass":56.2,"height":null,"#
                + #""impedance":null,"multiplePacket":false,"muscleMass":null,"musclePercentage":null,"softLeanMass":null,"#
                + #""timestamp":null,"unit":"SI","userID":1,"weight":72.4}"# + "\n")
        try await healthgate.assertRun(["decode", "glucose-measurement", ""], exits: 65, saying: "Glucose Measurement (0x2A18): field flags at offset 0")
    }
}
