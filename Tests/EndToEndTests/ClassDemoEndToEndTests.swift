import Foundation
import GatewayTesting
import XCTest

/// `healthgate demo --class 30` end to end with the real executable: a class of 30 simulated
/// straps (20 ANT+ through the simulated stick, 6 broadcasting, 4 connected, the last of them
/// also broadcasting), each worn by its own participant, a workout for each and the board.
final class ClassDemoEndToEndTests: XCTestCase {
    static let size = 30
    static let seconds = 20

    /// Every participant's heart rate is stored, from its own strap only; each has a stored
    /// workout; the dual-path strap's wearer has one sample per reading (no two at one time);
    /// the board's event stream shows the 30 tiles, each with a heart rate.
    func testAClassOfThirtyOverThreePathsStoresEachMembersOwnHeartRate() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("class.sqlite").path
        let daemon = try healthgate.start([
            "demo", "--class", String(Self.size), "--listen", "127.0.0.1:0", "--db", database, "--quiet",
            "--duration", String(Self.seconds),
        ])
        try await waitUntil(timeout: .seconds(60), "the board to listen") { daemon.standardError.contains("live board at http://") }
        let port = try XCTUnwrap(Self.boardPort(in: daemon.standardError), daemon.standardError)

        // The board's event stream: its first event is the whole board, a tile per participant.
        try await waitUntil(timeout: .seconds(Double(Self.seconds)), "30 tiles with a heart rate on the board") {
            let tiles = Self.firstBoardEvent(port: port)
            return tiles.count == Self.size && tiles.allSatisfy { ($0["heartRate"] as? Double) != nil }
        }
        let board = Self.firstBoardEvent(port: port)
        // Which strap each participant wears, as the running demo's roster says.
        let roster = try await healthgate.run(["participant", "list", "--format", "json"])
        XCTAssertEqual(roster.status, 0, roster.standardError)
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(roster.standardOutput.utf8)) as? [[String: Any]])
        var assignments: [String: String] = [:]
        for entry in entries {
            guard let name = entry["name"] as? String, let devices = entry["devices"] as? [String] else { continue }
            XCTAssertEqual(devices.count, 1, "\(name) wears one strap")
            assignments[name] = devices.first
        }
        XCTAssertEqual(assignments.count, Self.size)
        XCTAssertEqual(Set(assignments.values).count, Self.size, "a strap per participant")
        let exit = try await daemon.waitForExit(timeout: .seconds(120))
        XCTAssertEqual(exit.status, 0, exit.standardError)
        XCTAssertTrue(
            exit.standardError.contains("a class of 30: 20 ANT+ straps, 6 broadcasting, 4 connected"), exit.standardError)

        // The participants and their straps, as the demo configured them: 30 names, 30 straps.
        let tiles = Set(board.compactMap { $0["name"] as? String })
        XCTAssertEqual(tiles.count, Self.size, "\(tiles)")

        let list = try await healthgate.run(["workout", "list", "--db", database, "--format", "json"])
        XCTAssertEqual(list.status, 0, list.standardError)
        let workouts = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.standardOutput.utf8)) as? [[String: Any]])
        let owners = workouts.compactMap { ($0["metadata"] as? [String: Any])?["healthgate.participant"] as? String }
        XCTAssertEqual(Set(owners), tiles, "a stored workout per participant")
        XCTAssertEqual(owners.count, Self.size)

        let query = try await healthgate.run(["query", "samples", "--type", "heartRate", "--db", database, "--format", "json"])
        XCTAssertEqual(query.status, 0, query.standardError)
        let samples = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(query.standardOutput.utf8)) as? [[String: Any]])
        // Each sample's strap: its Polar id when its name carries one (both paths of a Polar
        // strap), else its radio identifier (an ANT+ id, an address).
        var byStrap: [String: [[String: Any]]] = [:]
        for sample in samples {
            guard let strap = Self.strap(of: sample) else { return XCTFail("a sample without a device: \(sample)") }
            byStrap[strap, default: []].append(sample)
        }
        XCTAssertEqual(byStrap.count, Self.size, "heart rate from every strap: \(byStrap.keys.sorted())")
        XCTAssertEqual(byStrap.keys.filter { $0.hasPrefix("ANT:120:") }.count, 20, "\(byStrap.keys.sorted())")

        // Each workout collected its wearer's strap only: never more heart rates than that strap
        // sent while the workout ran (a second strap's would at least double them), and some.
        for workout in workouts {
            let metadata = workout["metadata"] as? [String: Any] ?? [:]
            guard let owner = metadata["healthgate.participant"] as? String else { continue }
            let strap = try XCTUnwrap(assignments[owner], "no strap for \(owner)").uppercased()
            let statistics = workout["statistics"] as? [[String: Any]] ?? []
            let heartRate = statistics.first { $0["type"] as? String == "heartRate" }
            let collected = heartRate?["sampleCount"] as? Int ?? 0
            let sent = byStrap[strap]?.count ?? 0
            XCTAssertGreaterThan(collected, 0, "\(owner)'s workout has heart rate")
            XCTAssertLessThanOrEqual(collected, sent, "\(owner)'s workout holds only the heart rate of \(strap)")
        }

        // The dual-path strap (connected and broadcasting): one sample per reading.
        // Its samples carry its Polar name, and those of its connection its address too.
        let dualStraps = Set(samples.compactMap { sample -> String? in
            let device = sample["device"] as? [String: Any]
            guard (device?["radioIdentifier"] as? String)?.hasPrefix("02:") == true, let strap = Self.strap(of: sample),
                strap.count == 8
            else { return nil }
            return strap
        })
        XCTAssertEqual(dualStraps.count, 1, "one strap heard connected and broadcasting: \(dualStraps)")
        let dual = try XCTUnwrap(dualStraps.first)
        XCTAssertEqual(assignments.values.filter { $0.uppercased() == dual }.count, 1, "worn by one participant")
        let dualSamples = byStrap[dual] ?? []
        let times = dualSamples.compactMap { $0["start"] as? String }
        XCTAssertEqual(times.count, dualSamples.count)
        XCTAssertEqual(Set(times).count, times.count, "two samples at one time for the dual-path strap: \(times)")
        XCTAssertGreaterThan(times.count, 0)
        // About one a second over the time the strap was heard (the sources run on while the
        // workouts end), not one per path.
        let dates = times.compactMap { try? Date($0, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)) }
        XCTAssertEqual(dates.count, times.count, "\(times)")
        if let first = dates.min(), let last = dates.max() {
            XCTAssertLessThanOrEqual(Double(dates.count), last.timeIntervalSince(first) + 2, "about one a second, not one per path: \(times)")
        }
    }

    /// The heart-rate arbiter's drops (the dual-path strap's second copy of its heart rate) are
    /// reported where the gateway's numbers are: `status` as text and as JSON, and `/metrics`,
    /// each with a count above zero while the class of three (one strap connected and
    /// broadcasting) runs.
    func testTheArbitersDropsAreInStatusAndMetrics() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("class.sqlite").path
        let daemon = try healthgate.start(["demo", "--class", "3", "--listen", "127.0.0.1:0", "--db", database, "--quiet"])
        try await waitUntil(timeout: .seconds(60), "the board to listen") { daemon.standardError.contains("live board at http://") }
        let port = try XCTUnwrap(Self.boardPort(in: daemon.standardError), daemon.standardError)

        try await waitUntil(timeout: .seconds(60), "a reading dropped as a second path's copy, in status --format json") {
            guard let status = try? await healthgate.run(["status", "--format", "json"]), status.status == 0,
                let report = try? JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any],
                let counts = report["heartRate"] as? [String: Any], let dropped = counts["droppedReadings"] as? Int
            else { return false }
            XCTAssertNotNil(counts["handovers"] as? Int, status.standardOutput)
            return dropped > 0
        }
        let text = try await healthgate.run(["status"])
        XCTAssertEqual(text.status, 0, text.standardError)
        let line = try XCTUnwrap(
            text.standardOutput.firstMatch(of: /heart rate: (\d+) readings? dropped as a second path's copy, \d+ handovers? between paths/),
            text.standardOutput)
        XCTAssertGreaterThan(Int(line.output.1) ?? 0, 0, text.standardOutput)
        let metrics = try Self.get("http://127.0.0.1:\(port)/metrics")
        let series = try XCTUnwrap(metrics.firstMatch(of: /\nhealthgate_heart_rate_dropped_readings_total (\d+)\n/), metrics)
        XCTAssertGreaterThan(Int(series.output.1) ?? 0, 0, metrics)
        XCTAssertNotNil(metrics.firstMatch(of: /\nhealthgate_heart_rate_handovers_total \d+\n/), metrics)

        try await daemon.terminate(timeout: .seconds(60))
    }

    /// The body of `url` as curl fetches it.
    static func get(_ url: String) throws -> String {
        try runProcessOutput(URL(fileURLWithPath: "/usr/bin/curl"), ["-sf", "--max-time", "10", url], mergingErrors: false).output
    }

    /// The board's port from its log line `live board at http://127.0.0.1:PORT/`.
    static func boardPort(in log: String) -> Int? {
        guard let range = log.range(of: "live board at http://127.0.0.1:") else { return nil }
        return Int(log[range.upperBound...].prefix { $0.isNumber })
    }

    /// The tiles of the first event on the board's stream (the whole board), read with curl for
    /// at most two seconds; empty when none arrived.
    static func firstBoardEvent(port: Int) -> [[String: Any]] {
        let arguments = ["-sN", "--max-time", "2", "http://127.0.0.1:\(port)/events"]
        guard let text = try? runProcessOutput(URL(fileURLWithPath: "/usr/bin/curl"), arguments, mergingErrors: false).output,
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("data: ") }),
            let event = try? JSONSerialization.jsonObject(with: Data(line.dropFirst("data: ".count).utf8)) as? [String: Any],
            event["full"] as? Bool == true
        else { return [] }
        return event["tiles"] as? [[String: Any]] ?? []
    }

    /// A sample's strap: the Polar id in its device's name, else its radio identifier.
    static func strap(of sample: [String: Any]) -> String? {
        guard let device = sample["device"] as? [String: Any] else { return nil }
        if let name = device["name"] as? String {
            let words = name.split(separator: " ")
            if words.count >= 3, words[0] == "Polar", let id = words.last, id.count == 8 { return String(id) }
        }
        return ((device["radioIdentifier"] as? String) ?? (device["localIdentifier"] as? String))?.uppercased()
    }
}
