import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// A value is printed with the decimals its type declares (`QuantityType.fractionDigits`), the
/// same in `query samples` and `query stats` as in the demo's live lines (issue #45: `120.000
/// mg/dL` then `126 mg/dL`, `36.800 degC`); JSON and CSV keep every digit.
final class ValuePrecisionTests: StoreTestCase {
    func healthgate(_ arguments: String...) throws -> ProcessResult {
        try runHealthgate(arguments)
    }

    private func sample(_ ids: SampleIDGenerator, _ type: QuantityType, _ value: Double, _ unit: HealthUnit, at seconds: Double) throws -> QuantitySample {
        try QuantitySample(
            id: ids.next(), type: type, quantity: Quantity(value, unit), start: at(seconds), end: at(seconds),
            device: Device(name: "meter", localIdentifier: "AA:00:00:00:00:01"))
    }

    /// The VALUE column of a `query samples` table.
    private func values(_ table: String) -> [String] {
        table.split(separator: "\n").dropFirst().map { String($0.split(separator: " ", omittingEmptySubsequences: true)[2]) }
    }

    func testEveryTablePrintsAValueWithItsTypesDecimals() async throws {
        let ids = makeIDs()
        try await HealthStore(path: path).write([
            .quantity(try sample(ids, .bloodGlucose, 120.0, .milligramPerDeciliter, at: 10)),
            .quantity(try sample(ids, .bloodGlucose, 126, .milligramPerDeciliter, at: 20)),
            .quantity(try sample(ids, .bodyTemperature, 36.8, .degreeCelsius, at: 10)),
            .quantity(try sample(ids, .bodyTemperature, 98.6, try HealthUnit("degF"), at: 20)),
            .quantity(try sample(ids, .heartRateVariabilitySDNN, 26.4217, .millisecond, at: 10)),
        ])
        XCTAssertEqual(QuantityType.bloodGlucose.fractionDigits, 0)
        XCTAssertEqual(QuantityType.bodyTemperature.fractionDigits, 1)

        let glucose = try healthgate("query", "samples", "--type", "bloodGlucose", "--db", path)
        XCTAssertEqual(glucose.status, 0, glucose.error)
        XCTAssertEqual(values(glucose.output), ["120", "126"], glucose.output)

        // 98.6 degF is 37 degC: converted to the canonical unit, then printed with its decimal.
        let temperature = try healthgate("query", "samples", "--type", "bodyTemperature", "--db", path)
        XCTAssertEqual(values(temperature.output), ["36.8", "37.0"], temperature.output)
        let variability = try healthgate("query", "samples", "--type", "heartRateVariabilitySDNN", "--db", path)
        XCTAssertEqual(values(variability.output), ["26.4"], variability.output)

        // Statistics: the average (36.9), minimum, maximum and most recent, all with one decimal.
        let stats = try healthgate(
            "query", "stats", "--type", "bodyTemperature", "--db", path, "--since", "2027-01-16", "--until", "2027-01-16T00:01:00Z")
        XCTAssertEqual(stats.status, 0, stats.error)
        let row = try XCTUnwrap(stats.output.split(separator: "\n").last).split(separator: " ", omittingEmptySubsequences: true)
        XCTAssertEqual(Array(row.dropFirst(2)), ["2", "36.9", "36.8", "37.0", "37.0", "degC"], stats.output)

        // CSV keeps what was measured.
        let csv = try healthgate("query", "samples", "--type", "heartRateVariabilitySDNN", "--db", path, "--format", "csv")
        XCTAssertTrue(csv.output.contains(",26.4217,ms,"), csv.output)
    }
}
