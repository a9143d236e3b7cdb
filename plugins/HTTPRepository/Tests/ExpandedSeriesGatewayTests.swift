import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// End to end, `quantitySeries: expand`: the built `healthgate run` with a simulated strap, the
/// store and this sink in the native format, killed with SIGKILL while its heart rates fill a
/// series, started again and stopped gracefully, then started once more without sources. Every
/// quantity of every series the store closed reaches the repository once, as a sample with its
/// derived id, the series open at the kill among them; no series object is sent.
final class ExpandedSeriesGatewayTests: XCTestCase {
    func testEachQuantityArrivesOnceAsASampleAcrossACrashAndARestart() async throws {
        let healthgate = try HealthgateExecutable()
        defer { try? FileManager.default.removeItem(at: healthgate.root) }
        let server = try RecordingServer.started(in: healthgate.root)
        defer { server.stop() }
        let sink = """
            {"kind": "http-repository", "name": "repo", "config": {"url": "\(server.url)", "batchIntervalSeconds": 0.05,
              "gzip": false, "quantitySeries": "expand", "retry": {"initialDelaySeconds": 0.1, "maxDelaySeconds": 0.2}}}
            """
        let busy = healthgate.root.appendingPathComponent("busy.json")
        try """
            {"sources": [{"kind": "ble-heart-rate", "name": "strap", "config": {"transport": "simulated",
               "simulation": {"heartRateMonitors": 1, "notificationsPerSecond": 4}}}],
             "sinks": [{"kind": "sqlite", "name": "store"}, \(sink)]}
            """.write(to: busy, atomically: true, encoding: .utf8)
        let quiet = healthgate.root.appendingPathComponent("quiet.json")
        try #"{"sources": [], "sinks": [{"kind": "sqlite", "name": "store"}, "#.appending(sink + "]}")
            .write(to: quiet, atomically: true, encoding: .utf8)
        let path = healthgate.defaultDatabase.path

        // A crash while the strap's heart rates fill a series: it stays open in the store.
        let first = try healthgate.start(["run", "--config", busy.path])
        do {
            try await waitUntil(timeout: .seconds(30), "a series of a few readings") {
                try await Self.openSeries(path).contains { $0.count >= 8 }
            }
        } catch {
            first.send(SIGKILL)
            XCTFail("\(error); the gateway logged:\n\(first.standardError.suffix(4000))")
            return
        }
        first.send(SIGKILL)
        _ = try await first.waitForExit(timeout: .seconds(30))
        let openAtTheKill = Set(try await Self.openSeries(path).map(\.id))
        XCTAssertFalse(openAtTheKill.isEmpty)

        // Long enough for the writer to close what the crash left open once it idled past the
        // policy's gap (10 s); the series open at the stop are closed as the store closes.
        let second = try await healthgate.run(["run", "--config", busy.path, "--duration", "14"])
        XCTAssertEqual(second.status, 0, second.standardError.suffix(3000).description)
        // Sends what the store closed at the stop, and writes nothing of its own.
        let third = try await healthgate.run(["run", "--config", quiet.path, "--duration", "2"])
        XCTAssertEqual(third.status, 0, third.standardError.suffix(3000).description)

        let store = try HealthStore(path: path, access: .readOnly)
        let changes = try await store.changes(since: 0, limit: 1_000_000, includingCorrelationMembers: false)
        let cursor = try await store.follower("repo")?.anchor
        XCTAssertEqual(cursor, changes.anchor, "the sink did not reach the store's latest anchor")
        var expected: [String: Int] = [:]
        var closed: Set<SampleID> = []
        for record in changes.added {
            switch record {
            case .quantitySeries(let series):
                XCTAssertFalse(series.isProvisional, "\(series.id) is still open after a graceful run")
                closed.insert(series.id)
                for sample in series.quantitySamples { expected[sample.id.uuidString, default: 0] += 1 }
            case .quantity(let sample):
                expected[sample.id.uuidString, default: 0] += 1
            default:
                continue
            }
        }
        XCTAssertTrue(openAtTheKill.isSubset(of: closed), "a series open at the kill is gone")
        XCTAssertGreaterThan(expected.count, 40)

        var delivered: [String: Int] = [:]
        var series: Set<String> = []
        for request in server.requests() where request.method == "POST" && request.status == 200 {
            let body = try XCTUnwrap(request.body as? [String: Any])
            XCTAssertNil(body["quantitySeries"], "a series object was sent in expand")
            for sample in body["samples"] as? [[String: Any]] ?? [] {
                delivered[sample["uuid"] as? String ?? "", default: 0] += 1
                if let uuid = (sample["metadata"] as? [String: Any])?["healthgate.series"] as? String { series.insert(uuid) }
            }
        }
        XCTAssertEqual(delivered, expected, "each quantity of each closed series (and each plain sample) once")
        XCTAssertTrue(
            Set(openAtTheKill.map(\.uuidString)).isSubset(of: series), "the quantities of a series open at the kill never arrived")
    }

    /// The store's open quantity series; none before the gateway made the store.
    static func openSeries(_ path: String) async throws -> [QuantitySeriesSample] {
        guard FileManager.default.fileExists(atPath: path), let store = try? HealthStore(path: path, access: .readOnly) else {
            return []
        }
        return try await store.changes(since: 0, limit: 1_000_000).added.compactMap { record in
            if case .quantitySeries(let series) = record, series.isProvisional { return series }
            return nil
        }
    }
}
