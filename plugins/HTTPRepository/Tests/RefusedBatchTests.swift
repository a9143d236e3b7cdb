import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import HTTPRepository
import RemoteSinkKit
import XCTest

/// Issues 43 and 56, end to end: the built `healthgate run` with sixteen simulated straps and
/// foot pods, the SQLite store and a recording repository that refuses some requests and keeps
/// each Idempotency-Key's fingerprint (answering 422 to a key reused with another payload, as
/// the IETF draft says), stopped with SIGTERM while a refused batch waits out its Retry-After.
/// While the gateway is down, objects of that batch move on to later versions (a heartbeat
/// series stored again, a sample deleted); then it starts once more with no sources, the
/// repository now accepting everything, to send what the stop left. Counted against the store:
/// - nothing the store holds is missing from the repository, and nothing became a dead letter;
/// - one key named one payload: no 422, and every request under a key has the first one's body;
/// - no record (the same uuid and content) was accepted under two Idempotency-Keys;
/// - a refused request is sent again under its key with its records, or, when its batch lost a
///   change since, under another key with the rest of them (the batch left at the stop);
/// - no request reached the repository before the time a Retry-After asked for, in either run.
final class RefusedBatchTests: XCTestCase {
    /// Requests the gateway sent before it had read the refusal may arrive just after it: on a
    /// loaded two-core machine its reaction took 0.29 s once (CI, 2026-11-25). A follower that
    /// ignored the pause would send a batch every 0.2 s of the 3 s or more it asks for, so half a
    /// second of slack still catches it many times over.
    static let inFlightSlack = 0.5
    /// The pause's end is measured on two clocks: the gateway times it on its monotonic clock
    /// (and across a restart on the wall-clock date it stored), the server stamps arrivals with
    /// Python's time.time(). A request at the pause's very end read 2.995–3.000 s once (clean
    /// clone, 2026-11-25); a follower that ignored the pause would be early by a batch interval
    /// or more, not by milliseconds.
    static let clockTolerance = 0.02

    func testA503WithRetryAfterAndAStopWhileItWaitsLosesNothing() async throws {
        try await scenario(#"{"every": {"n": 4, "status": 503, "retry_after": "3"}}"#)
    }

    /// Also: while the pause lasts, `status` and `/metrics` show it.
    func testA429WithAnHTTPDateRetryAfterLosesNothingAndSendsEachRecordUnderOneKey() async throws {
        try await scenario(#"{"every": {"n": 4, "status": 429, "retry_after": {"date_in": 4}}}"#, observePause: true)
    }

    /// The first request is answered last (2 s late), while the ones after it are answered, one
    /// of them refused: the stop comes while the refused batch waits and the first is unanswered.
    func testAnswersOutOfOrderAroundAStopLoseNothing() async throws {
        try await scenario(#"{"delay": [2.5], "every": {"n": 3, "status": 503, "retry_after": "3"}}"#)
    }

    func scenario(_ rule: String, observePause: Bool = false, file: StaticString = #filePath, line: UInt = #line) async throws {
        let healthgate = try HealthgateExecutable()
        defer { try? FileManager.default.removeItem(at: healthgate.root) }
        let server = try RecordingServer.started(in: healthgate.root)
        defer { server.stop() }
        try await server.control(rule)
        try await server.control(#"{"idempotency": true}"#)
        let sink = """
            {"kind": "http-repository", "name": "repo", "config": {"url": "\(server.url)", "batchIntervalSeconds": 0.2,
              "retry": {"initialDelaySeconds": 0.1, "maxDelaySeconds": 0.2}}}
            """
        let busy = try write(
            """
            {"sources": [{"kind": "ble-heart-rate", "name": "sim", "config": {"transport": "simulated",
               "simulation": {"heartRateMonitors": 8, "footPods": 8, "notificationsPerSecond": 4}}}],
             "sinks": [{"kind": "sqlite", "name": "store"}, \(sink)],
             "metrics": {"listen": "127.0.0.1:0"}}
            """, to: healthgate.root.appendingPathComponent("busy.json"))
        let quiet = try write(
            #"{"sources": [], "sinks": [{"kind": "sqlite", "name": "store"}, "# + sink + "]}",
            to: healthgate.root.appendingPathComponent("quiet.json"))

        let first = try healthgate.start(["run", "--config", busy.path])
        // Run until two refusals were answered, then stop right after the next refusal: its batch
        // waits out the Retry-After while the others in flight are answered.
        do {
            try await waitUntil(timeout: .seconds(60), "two refused requests") {
                server.requests().filter { $0.retryAfter != nil }.count >= 2
            }
            try await waitUntil(timeout: .seconds(30), "a refused request answered last") {
                server.requests().last?.retryAfter != nil
            }
        } catch {
            first.send(SIGKILL)
            XCTFail("\(error); the gateway logged:\n\(first.standardError.suffix(4000))", file: file, line: line)
            return
        }
        if observePause {
            // The server records a request before it answers: the gateway may not have the
            // refusal yet.
            try await waitUntil(timeout: .seconds(3), "status to show the pause") {
                try await healthgate.run(["status"]).standardOutput.contains("pausedUntil")
            }
            // /metrics says what the store last published, read every second.
            var metrics = ""
            var seconds: Double?
            let asked = ContinuousClock.now
            repeat {
                if seconds != nil { try await Task.sleep(for: .milliseconds(100)) }
                metrics = try fetch(first.standardError)
                let pause = metrics.split(separator: "\n").first { $0.hasPrefix(#"healthgate_follower_pause_seconds{follower="repo"}"#) }
                seconds = pause.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
            } while seconds == 0 && ContinuousClock.now - asked < .seconds(3)
            XCTAssertNotNil(seconds, "no pause in /metrics:\n\(metrics)", file: file, line: line)
            XCTAssertGreaterThan(seconds ?? 0, 0, "the pause in /metrics is over already", file: file, line: line)
        }
        first.send(SIGTERM)
        let firstRun = try await first.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(firstRun.status, 0, firstRun.standardError.suffix(3000).description, file: file, line: line)
        XCTAssertTrue(
            firstRun.standardError.contains("stopping while"), "the stop did not come while a batch waited:\n"
                + firstRun.standardError.suffix(3000), file: file, line: line)

        let firstRunRequests = server.requests().count
        let left = try await moveOnObjectsOfTheBatchLeft(in: healthgate.defaultDatabase.path, file: file, line: line)

        // The repository accepts everything now, keeping the fingerprints; the pause it asked
        // for last still holds.
        try await server.control(#"{"reset": true, "idempotency": true}"#)
        let second = try await healthgate.run(["run", "--config", quiet.path, "--duration", "6"])
        XCTAssertEqual(second.status, 0, second.standardError.suffix(3000).description, file: file, line: line)
        XCTAssertTrue(
            second.standardError.contains("sent everything the store holds"), second.standardError.suffix(3000).description,
            file: file, line: line)

        let requests = server.requests().filter { $0.method == "POST" && $0.path != "/_control" }
        let accepted = requests.filter { (200..<300).contains($0.status) }

        // Nothing the store holds is missing from the repository.
        // Opened for writing (both runs are over): a store an older healthgate wrote is upgraded.
        let store = try await HealthStore.open(path: healthgate.defaultDatabase.path)
        defer { Task { await store.close() } }
        let records = try await store.changes(since: 0, limit: 1_000_000).added
        let held = records.map { $0.id.uuidString.lowercased() }
        // The straps' and pods' readings: most of them quantities of series.
        let readings = records.reduce(0) { total, record in
            if case .quantitySeries(let series) = record { return total + series.count }
            return total + 1
        }
        XCTAssertGreaterThan(readings, 100, file: file, line: line)
        let delivered = Set(accepted.flatMap { $0.records.compactMap { $0["uuid"] as? String } }.map { $0.lowercased() })
        let missing = held.filter { !delivered.contains($0) }
        XCTAssertEqual(missing.count, 0, "\(missing.count) of \(held.count) stored records never reached the repository", file: file, line: line)
        let cursor = try await store.follower("repo")?.anchor
        let latest = try await store.latestAnchor()
        XCTAssertEqual(cursor, latest, "the cursor is not at the store's latest anchor", file: file, line: line)
        let letters = try await store.deadLetters(follower: "repo")
        XCTAssertEqual(letters.count, 0, "refused changes were kept as dead letters: \(letters.prefix(3))", file: file, line: line)

        // One key names one payload: the fingerprinting repository never saw a key reused with
        // another one.
        let reused = requests.filter { $0.status == 422 }
        XCTAssertEqual(
            reused.count, 0, "\(reused.count) request(s) reused a key with another payload: \(reused.prefix(2).map(\.headers))",
            file: file, line: line)
        for (key, sent) in Dictionary(grouping: requests, by: { $0.headers["Idempotency-Key"] ?? "" }) {
            XCTAssertEqual(Set(sent.map(\.fingerprint)).count, 1, "the key \(key) named several payloads", file: file, line: line)
        }

        // The same record is accepted under one key.
        var keys: [String: Set<String>] = [:]
        for request in accepted {
            let key = request.headers["Idempotency-Key"] ?? ""
            for record in request.records {
                let content = try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])
                keys[String(decoding: content, as: UTF8.self), default: []].insert(key)
            }
        }
        let twice = keys.values.filter { $0.count > 1 }
        XCTAssertEqual(twice.count, 0, "\(twice.count) records were accepted under two keys, e.g. \(twice.first ?? [])", file: file, line: line)

        // A refused request is sent again under its key, or, when its batch lost changes since
        // (a series grew or closed, a sample was deleted), each of its objects is accepted later
        // under another key: in the batch's other request, or in a later version.
        for refused in requests where refused.retryAfter != nil {
            let key = refused.headers["Idempotency-Key"]
            let again = accepted.contains { $0.headers["Idempotency-Key"] == key }
            let later = Set(accepted.filter { $0.headers["Idempotency-Key"] != key && $0.received > refused.received }.flatMap(\.recordUUIDs))
            let deleted = Set(accepted.flatMap { (($0.body as? [String: Any])?["deleted"] as? [[String: Any]] ?? []).compactMap { $0["uuid"] as? String } })
            let lost = Set(refused.recordUUIDs).subtracting(later).subtracting(deleted)
            XCTAssertTrue(
                again || lost.isEmpty,
                "the refused request under \(key ?? "no key") was never accepted, and \(lost.count) of its objects never later",
                file: file, line: line)
        }
        // The batch left at the stop, whose objects moved on while the gateway was down: sent
        // again under the key of what it carries now, never under the key it was refused under.
        let refusedLeft = try XCTUnwrap(
            requests.last { $0.headers["Idempotency-Key"] == left.key }, "no request under the key of the batch left", file: file, line: line)
        let secondRun = server.requests()[firstRunRequests...].filter { $0.method == "POST" }
        XCTAssertFalse(
            secondRun.contains { $0.headers["Idempotency-Key"] == left.key }, "the batch left was sent again under the key it was refused under",
            file: file, line: line)
        // It lost a change: moved on while the gateway was down, or at its stop (a series the store
        // closed as it closed, a heartbeat series finished).
        XCTAssertNotEqual(Set(refusedLeft.recordUUIDs), left.stayed, "the batch left lost no change", file: file, line: line)
        if !left.stayed.isEmpty {
            XCTAssertTrue(
                secondRun.contains {
                    (200..<300).contains($0.status) && !$0.recordUUIDs.isEmpty && Set($0.recordUUIDs).isSubset(of: left.stayed)
                }, "the batch left was not sent again with the records that stayed in it", file: file, line: line)
        }

        // No request before the time a Retry-After asked for (the restart included).
        for (index, refused) in requests.enumerated() {
            guard let value = refused.retryAfter else { continue }
            let until: Double
            if let seconds = Double(value) {
                until = refused.received + seconds
            } else {
                let date = try XCTUnwrap(DeliveryPolicy.httpDate(value), "Retry-After \(value)", file: file, line: line)
                until = date.timeIntervalSince1970
            }
            let early = requests[(index + 1)...].filter { $0.received > refused.received + Self.inFlightSlack && $0.received < until - Self.clockTolerance }
            XCTAssertEqual(
                early.count, 0,
                "\(early.count) request(s) came \(early.map { String(format: "%.3f", $0.received - refused.received) }) s after a Retry-After of \(value)",
                file: file, line: line)
        }
        XCTAssertTrue(requests.contains { $0.retryAfter != nil }, file: file, line: line)
    }

    /// Moves objects of the oldest batch the stop left (refused, waiting) on to later anchors, as a
    /// source would while the gateway is down: a heartbeat series in it is stored again in its
    /// next version, and a sample or a quantity series in it is deleted. (The stop may have moved
    /// every one of them on already: the store closes its open series as it closes.)
    /// - Returns: the key the batch was begun under and the uuids (lower case) of the objects
    ///   still in its range.
    func moveOnObjectsOfTheBatchLeft(
        in path: String, file: StaticString, line: UInt
    ) async throws -> (key: String?, stayed: Set<String>) {
        let store = try await HealthStore.open(path: path)
        let begun = try await store.followerBatches("repo").first { !$0.acknowledged }
        guard let begun else {
            await store.close()
            XCTFail("the stop left no batch begun", file: file, line: line)
            return (nil, [])
        }
        let page = try await store.changes(
            since: begun.after, limit: Int(begun.through - begun.after), includingCorrelationMembers: false)
        let held = zip(page.added, page.addedAnchors).filter { $0.1 <= begun.through }.map(\.0)
        var moved: Set<String> = []
        for record in held {
            guard case .heartbeatSeries(var series) = record else { continue }
            series.metadata.syncVersion = (series.metadata.syncVersion ?? 0) + 1
            try await store.write([.heartbeatSeries(series)])
            moved.insert(series.id.uuidString.lowercased())
            break
        }
        for record in held {
            switch record {
            case .quantity, .quantitySeries: break
            default: continue
            }
            _ = try await store.delete(.ids([record.id]))
            moved.insert(record.id.uuidString.lowercased())
            break
        }
        await store.close()
        return (begun.key, Set(held.map { $0.id.uuidString.lowercased() }).subtracting(moved))
    }

    /// GET of the metrics URL the gateway logged, by Python's urllib (the test needs no HTTP
    /// client of the code under test).
    func fetch(_ log: String) throws -> String {
        guard let range = log.range(of: #"metrics at (http://\S+/metrics)"#, options: .regularExpression) else {
            throw NoMetricsAddress()
        }
        let url = String(log[range].dropFirst("metrics at ".count))
        let script = "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())"
        return try runProcessOutput(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, url], mergingErrors: false).output
    }

    struct NoMetricsAddress: Error {}

    func write(_ text: String, to url: URL) throws -> URL {
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }
}
