import Foundation
import GatewayTesting
import XCTest

extension HealthgateExecutable {
    /// Fails unless `query samples` finds heart rates in the store file `database`.
    func assertHeartRatesStored(in database: String, file: StaticString = #filePath, line: UInt = #line) async throws {
        let query = try await run(["query", "samples", "--type", "heartRate", "--db", database, "--format", "json", "--limit", "100000"])
        XCTAssertEqual(query.status, 0, query.standardError, file: file, line: line)
        let samples = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(query.standardOutput.utf8)) as? [Any], file: file, line: line)
        XCTAssertFalse(samples.isEmpty, file: file, line: line)
    }

    /// Runs the gateway for 3 s on the store file `database` with `store.retentionDays` 7 and
    /// `store.keepWorkoutSamples` as `keep`; the configuration is the file `configurationName`.
    func runPruning(_ database: String, keepWorkoutSamples keep: Bool, configurationName: String) async throws -> Result {
        let configuration = root.appendingPathComponent(configurationName)
        try Data(#"{"store": {"path": "\#(database)", "retentionDays": 7, "keepWorkoutSamples": \#(keep)}}"#.utf8)
            .write(to: configuration)
        return try await run(["run", "--config", configuration.path, "--duration", "3"])
    }
}
