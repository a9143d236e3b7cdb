import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import HealthStoreTesting
import XCTest

/// Quantity series as a user of the built executable meets them: the demo's heart rates stored as
/// series, `query samples` listing each reading with a derived uuid and the series it belongs to,
/// `query changes` listing the series, `delete --id` taking the series' uuid and deleting it
/// whole; and the background migration of a store the previous release wrote, in `status`, its
/// JSON and the log.
final class QuantitySeriesEndToEndTests: XCTestCase {
    func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    func testTheDemosHeartRatesAreSeriesThatQueryListsAsSamplesAndDeleteRemovesWhole() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("demo.sqlite").path
        let demo = try await healthgate.run(["demo", "--duration", "4", "--db", database, "--quiet"])
        XCTAssertEqual(demo.status, 0, demo.standardError)

        let query = ["query", "samples", "--type", "heartRate", "--source", "demo-heart-rate", "--db", database]
        let listed = try await healthgate.run(query + ["--format", "json"])
        XCTAssertEqual(listed.status, 0, listed.standardError)
        let samples = try XCTUnwrap(try json(listed.standardOutput) as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(samples.count, 2, listed.standardOutput)
        // Each reading is a sample of its own: a derived (version 8) uuid, and the series' uuid
        // in healthgate.series; no sync keys or provisional mark of the series.
        var bySeries: [String: [String]] = [:]
        for sample in samples {
            let uuid = try XCTUnwrap(sample["uuid"] as? String)
            XCTAssertEqual(Array(uuid)[14], "8", "a derived uuid: \(uuid)")
            let metadata = try XCTUnwrap(sample["metadata"] as? [String: Any])
            let series = try XCTUnwrap(metadata["healthgate.series"] as? String, "\(metadata)")
            XCTAssertEqual(Array(series)[14], "7", "the series' own uuid: \(series)")
            XCTAssertNil(metadata["syncIdentifier"])
            XCTAssertNil(metadata["healthgate.provisional"])
            bySeries[series, default: []].append(uuid)
        }
        XCTAssertLessThan(bySeries.count, samples.count, "readings a second apart share a series")
        let (series, readings) = try XCTUnwrap(bySeries.max { $0.value.count < $1.value.count })

        // The table and the CSV name the series too.
        let table = try await healthgate.run(query)
        XCTAssertTrue(table.standardOutput.split(separator: "\n").first?.hasSuffix("UUID                                  SERIES") ?? false,
                      table.standardOutput)
        XCTAssertTrue(table.standardOutput.contains("\(readings[0])  \(series)\n"), table.standardOutput)
        let csv = try await healthgate.run(query + ["--format", "csv"])
        XCTAssertTrue(csv.standardOutput.hasPrefix("uuid,type,start,end,value,unit,recorded_value,recorded_unit,device,source,series\n"))
        XCTAssertTrue(csv.standardOutput.contains(",\(series)\n"), csv.standardOutput)

        // The change log holds the series, closed (the demo stopped), with every reading.
        let changes = try await healthgate.run(["query", "changes", "--type", "heartRate", "--db", database, "--format", "json"])
        XCTAssertEqual(changes.status, 0, changes.standardError)
        let added = try XCTUnwrap((try json(changes.standardOutput) as? [String: Any])?["added"] as? [[String: Any]])
        let stored = try XCTUnwrap(added.compactMap { $0["record"] as? [String: Any] }.first { record in
            (record["sample"] as? [String: Any])?["uuid"] as? String == series
        })
        XCTAssertEqual(stored["kind"] as? String, "quantitySeries")
        let body = try XCTUnwrap(stored["sample"] as? [String: Any])
        XCTAssertEqual(body["type"] as? String, "heartRate")
        XCTAssertEqual((body["quantities"] as? [[String: Any]])?.count, readings.count)
        let seriesMetadata = try XCTUnwrap(body["metadata"] as? [String: Any])
        XCTAssertEqual(seriesMetadata["syncIdentifier"] as? String, "quantity-series:\(series)")
        XCTAssertNil(seriesMetadata["healthgate.provisional"], "the stop closed it")

        // A reading's derived uuid is no object: refused, pointing at the series.
        let refused = try await healthgate.run(["delete", "--yes", "--db", database, "--id", readings[0]])
        XCTAssertEqual(refused.status, 64, refused.standardError)
        XCTAssertTrue(refused.standardError.contains("healthgate.series"), refused.standardError)
        // The series' uuid deletes every reading of it, one tombstone.
        let deleted = try await healthgate.run(["delete", "--yes", "--db", database, "--id", series, "--format", "json"])
        XCTAssertEqual(deleted.status, 0, deleted.standardError)
        let rows = try XCTUnwrap(try json(deleted.standardOutput) as? [[String: String]])
        XCTAssertEqual(rows, [["uuid": series, "kind": "quantitySeries"]])
        let after = try await healthgate.run(query + ["--format", "json"])
        let left = try XCTUnwrap(try json(after.standardOutput) as? [[String: Any]])
        XCTAssertEqual(left.count, samples.count - readings.count)
        XCTAssertFalse(left.contains { ($0["metadata"] as? [String: Any])?["healthgate.series"] as? String == series })

        let help = try await healthgate.run(["delete", "--help"])
        XCTAssertTrue(help.standardOutput.contains("--id takes the series' uuid"), help.standardOutput)
    }

    /// A store the previous release wrote: the gateway starts at once, migrates in the
    /// background, logs its start and end with the counts, and `status` shows each step.
    func testStatusShowsTheBackgroundMigrationOfAPreviousStore() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("previous.sqlite").path
        let contents = try PreviousSchemaStore.make(path: database, heartbeatSeries: 300, workoutLinks: 5000)
        let configuration = healthgate.root.appendingPathComponent("config.json")
        try Data(#"{"store": {"path": "\#(database)"}}"#.utf8).write(to: configuration)
        let daemon = try healthgate.start(["run", "--config", configuration.path])
        try await waitUntil(timeout: .seconds(60), "the control socket") {
            FileManager.default.fileExists(atPath: healthgate.controlSocket.path)
        }
        // Asks until every step has finished (each answer is a fresh process: no sleep between).
        var steps: [[String: Any]] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let status = try await healthgate.run(["status", "--config", configuration.path, "--format", "json"])
            XCTAssertEqual(status.status, 0, status.standardError)
            let report = try XCTUnwrap(try json(status.standardOutput) as? [String: Any])
            steps = try XCTUnwrap(report["migration"] as? [[String: Any]], "\(report)")
            if steps.allSatisfy({ $0["finished"] as? Bool == true }) { break }
            if ContinuousClock.now > deadline {
                XCTFail("the migration did not finish within 60 s: \(steps)")
                return
            }
        }
        XCTAssertEqual(steps.map { $0["step"] as? String }, ["heartbeats", "workout_samples"])
        XCTAssertEqual(steps.map { $0["total"] as? Int }, [contents.heartbeatSeries, contents.workoutLinks])
        XCTAssertEqual(steps.map { $0["done"] as? Int }, [contents.heartbeatSeries, contents.workoutLinks])
        XCTAssertTrue(steps.allSatisfy { $0["started"] is String && $0["finishedAt"] is String }, "\(steps)")
        let text = try await healthgate.run(["status", "--config", configuration.path])
        XCTAssertTrue(
            text.standardOutput.contains("\nstore migration: heartbeats 300/300, workout_samples 5000/5000, finished\n"),
            text.standardOutput)

        let result = try await daemon.terminate()
        XCTAssertTrue(
            result.standardError.contains("store migration: started in the background, ingest goes on; heartbeats 0/300, workout_samples 0/5000"),
            result.standardError)
        XCTAssertTrue(
            result.standardError.contains("batches; heartbeats 300/300 (finished), workout_samples 5000/5000 (finished)"),
            result.standardError)
        // The old beats read back from their new place.
        let store = try HealthStore(path: database, access: .readOnly)
        let changes = try await store.changes(since: 0, type: .heartbeatSeries)
        let series = changes.added.compactMap { record -> HeartbeatSeriesSample? in
            if case .heartbeatSeries(let series) = record { return series }
            return nil
        }
        XCTAssertEqual(series.count, 300)
        XCTAssertTrue(series.allSatisfy { $0.beats.count == 3 })
    }
}
