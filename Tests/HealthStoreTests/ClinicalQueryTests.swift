import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// The seeds' questions about clinical readings, asked as a user asks them: `healthgate query`
/// against a store holding weighings, blood-pressure correlations and glucose readings (one in
/// HealthKit's molar unit).
final class ClinicalQueryTests: StoreTestCase {
    func healthgate(_ arguments: String...) throws -> ProcessResult {
        try runHealthgate(["query"] + arguments)
    }

    override func setUp() async throws {
        try await super.setUp()
        let ids = makeIDs()
        let scale = Device(name: "Scale", localIdentifier: "C0:11:22:33:44:55")
        func sample(_ type: QuantityType, _ value: Double, _ unit: HealthUnit, at offset: Double) throws -> QuantitySample {
            try QuantitySample(
                id: ids.next(), type: type, quantity: Quantity(value, unit), start: at(offset), end: at(offset), device: scale)
        }
        func pressure(_ systolic: Double, _ diastolic: Double, at offset: Double) throws -> HealthRecord {
            .correlation(try .bloodPressure(
                id: ids.next(), systolic: try sample(.bloodPressureSystolic, systolic, .millimeterOfMercury, at: offset),
                diastolic: try sample(.bloodPressureDiastolic, diastolic, .millimeterOfMercury, at: offset)))
        }
        try await HealthStore(path: path).write([
            .quantity(try sample(.bodyMass, 70.4, .kilogram, at: 3600)),
            .quantity(try sample(.bodyMassIndex, 23.8, .count, at: 3600)),
            .quantity(try sample(.bodyMass, 70.1, .kilogram, at: 86_400 + 3600)),
            .quantity(try sample(.bodyMassIndex, 23.7, .count, at: 86_400 + 3600)),
            try pressure(120, 80, at: 7200), try pressure(130, 84, at: 36_000), try pressure(126, 82, at: 86_400 + 7200),
            .quantity(try sample(.bloodGlucose, 90, .milligramPerDeciliter, at: 8000)),
            .quantity(try sample(.bloodGlucose, 6, .millimolePerLiterOfGlucose, at: 30_000)),
        ])
    }

    func testDailyAverageBloodPressureAndGlucose() async throws {
        let systolic = try healthgate(
            "stats", "--type", "bloodPressureSystolic", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-18",
            "--interval", "day", "--format", "json")
        XCTAssertEqual(systolic.status, 0, systolic.error)
        let days = try HealthJSON.makeDecoder().decode([QuantityStatistics].self, from: Data(systolic.output.utf8))
        XCTAssertEqual(days.map(\.average), [125, 126])
        let diastolic = try healthgate(
            "stats", "--type", "bloodPressureDiastolic", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-17",
            "--format", "json")
        XCTAssertEqual(diastolic.status, 0, diastolic.error)
        XCTAssertEqual(try HealthJSON.makeDecoder().decode(QuantityStatistics.self, from: Data(diastolic.output.utf8)).average, 82)
        let glucose = try healthgate(
            "stats", "--type", "bloodGlucose", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-17", "--format", "json")
        XCTAssertEqual(glucose.status, 0, glucose.error)
        let statistics = try HealthJSON.makeDecoder().decode(QuantityStatistics.self, from: Data(glucose.output.utf8))
        // 90 mg/dL and 6 mmol/L of glucose (108.093528 mg/dL), averaged in mg/dL.
        XCTAssertEqual(statistics.average ?? 0, (90 + 6 * 18.015588000005408) / 2, accuracy: 1e-9)
    }

    func testMostRecentWeightAndBodyMassIndexStatistics() async throws {
        let latest = try healthgate("samples", "--type", "bodyMass", "--db", path, "--order", "desc", "--limit", "1", "--format", "json")
        XCTAssertEqual(latest.status, 0, latest.error)
        let samples = try HealthJSON.makeDecoder().decode([QuantitySample].self, from: Data(latest.output.utf8))
        XCTAssertEqual(samples.map(\.quantity.value), [70.1])
        let bmi = try healthgate(
            "stats", "--type", "bodyMassIndex", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-18", "--format", "json")
        XCTAssertEqual(bmi.status, 0, bmi.error)
        let statistics = try HealthJSON.makeDecoder().decode(QuantityStatistics.self, from: Data(bmi.output.utf8))
        XCTAssertEqual(statistics.average ?? 0, 23.75, accuracy: 1e-9)
        XCTAssertEqual(statistics.mostRecent, 23.7)
        XCTAssertEqual(statistics.sampleCount, 2)
    }
}
