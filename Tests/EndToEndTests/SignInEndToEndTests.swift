import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import Synchronization
import XCTest

/// Signing a strap in from the board, against the built executable: the demo's class with one
/// strap nobody wears (`--new-straps 1`); its new-strap tile arrives over the board's event
/// stream; the board's `POST /api/sign-in` refuses another origin and bad input, then assigns it
/// to a new member; her stored workout starts at the strap's first stored beat and links it; after
/// `workout end --all` the strap is free again.
final class SignInEndToEndTests: XCTestCase {
    /// The demo's third simulated monitor (Ana and Ben wear the first two).
    static let strap = "02:00:00:00:00:03"

    func testAStrapSignedInFromTheBoardFeedsItsWearerFromItsFirstBeatAndIsFreedAtTheClassEnd() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("class.sqlite").path
        let port = try MosquittoBroker.freePort()
        let board = "http://127.0.0.1:\(port)"
        let daemon = try healthgate.start([
            "demo", "--participants", "2", "--new-straps", "1", "--listen", "127.0.0.1:\(port)", "--db", database, "--quiet",
        ])
        try await waitUntil(timeout: .seconds(60), "the control socket") {
            FileManager.default.fileExists(atPath: healthgate.controlSocket.path)
        }

        // The new strap's tile, in the whole board the event stream sends first.
        let tile = try await Self.waitForNewStrapTile(board)
        XCTAssertEqual(tile["name"] as? String, "New strap")
        XCTAssertEqual((tile["strap"] as? [String: Any])?["radio"] as? String, "bluetoothConnection")
        XCTAssertNotNil(tile["heartRate"] as? Double, "its live heart rate")
        XCTAssertNil(tile["percentOfMaximum"], "no participant data")
        let listed = try await healthgate.run(["participant", "straps", "--format", "json"])
        XCTAssertEqual(listed.status, 0, listed.standardError)
        let straps = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]])
        XCTAssertEqual(straps.compactMap { $0["identity"] as? String }, [Self.strap])

        // Refused: another site's page, a body that is not the form's.
        let foreign = try Self.post(board, origin: "http://evil.example", body: #"{"strap": "\#(Self.strap)", "participant": "Mallory"}"#)
        XCTAssertEqual(foreign.status, 403, foreign.body)
        XCTAssertTrue(foreign.body.contains("Origin http://evil.example is not the board's"), foreign.body)
        let unknownKey = try Self.post(board, origin: board, body: #"{"strap": "\#(Self.strap)", "name": "Cleo"}"#)
        XCTAssertEqual(unknownKey.status, 400, unknownKey.body)
        XCTAssertTrue(unknownKey.body.contains(#"unknown key \"name\""#), unknownKey.body)
        let notJSON = try Self.post(board, origin: board, body: "strap=x&participant=y", contentType: "application/x-www-form-urlencoded")
        XCTAssertEqual(notJSON.status, 415, notJSON.body)
        let nobody = try await healthgate.run(["participant", "list", "--format", "json"])
        XCTAssertFalse(nobody.standardOutput.contains("Mallory"), "nothing refused was assigned")

        // Signed in from the board to a new member.
        let signedIn = try Self.post(board, origin: board, body: #"{"strap": "\#(Self.strap)", "participant": "Cleo"}"#)
        XCTAssertEqual(signedIn.status, 200, signedIn.body)
        XCTAssertTrue(signedIn.body.contains(#""participant":"Cleo""#), signedIn.body)
        let status = try await healthgate.run(["workout", "status", "--participant", "Cleo", "--format", "json"])
        XCTAssertEqual(status.status, 0, status.standardError)
        let cleo = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual(cleo["state"] as? String, "running", "her workout started with the sign-in")
        let after = try await healthgate.run(["participant", "straps", "--format", "json"])
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(after.standardOutput.utf8)) as? [Any])?.count, 0, "no new strap left: \(after.standardOutput)")
        let health = try await healthgate.run(["status"])
        XCTAssertTrue(health.standardOutput.contains("heart rate: "), health.standardOutput)

        // The class ends: the strap is free again.
        let ended = try await healthgate.run(["workout", "end", "--all"])
        XCTAssertEqual(ended.status, 0, ended.standardError)
        let list = try await healthgate.run(["participant", "list", "--format", "json"])
        let roster = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.standardOutput.utf8)) as? [[String: Any]])
        XCTAssertFalse(roster.contains { ($0["devices"] as? [String] ?? []).contains(Self.strap) }, list.standardOutput)
        XCTAssertFalse(roster.contains { $0["name"] as? String == "Cleo" }, "the sign-in made her; the class's end takes her strap")
        try await waitUntil(timeout: .seconds(20), "the freed strap offered again") {
            let again = try await healthgate.run(["participant", "straps", "--format", "json"])
            return again.standardOutput.contains(Self.strap)
        }

        try await daemon.terminate()

        // Her stored workout starts at the strap's first stored beat and links it.
        let stored = try await healthgate.run(["workout", "list", "--db", database, "--format", "json"])
        XCTAssertEqual(stored.status, 0, stored.standardError)
        let workouts = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(stored.standardOutput.utf8)) as? [[String: Any]])
        let workout = try XCTUnwrap(
            workouts.first { ($0["metadata"] as? [String: Any])?["healthgate.participant"] as? String == "Cleo" }, stored.standardOutput)
        let query = try await healthgate.run(["query", "samples", "--type", "heartRate", "--db", database, "--format", "json"])
        let samples = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(query.standardOutput.utf8)) as? [[String: Any]])
            .filter { ($0["device"] as? [String: Any])?["radioIdentifier"] as? String == Self.strap }
        let first = try XCTUnwrap(samples.min { ($0["start"] as? String ?? "") < ($1["start"] as? String ?? "") }, query.standardOutput)
        XCTAssertEqual(workout["startDate"] as? String, first["start"] as? String, "the workout starts at the strap's first beat")
        // The workout's records are found by its time, types and devices: its first is the strap's first beat.
        let id = try XCTUnwrap((workout["id"] as? String).flatMap(SampleID.init(string:)), "\(workout)")
        let read = try await HealthStore(path: database, access: .readOnly).workout(id: id)
        let collected = try XCTUnwrap(read).samples.filter { $0.type == .heartRate }
        XCTAssertEqual(collected.first.map { RFC3339.string(from: $0.startDate) }, first["start"] as? String, "the first beat is the workout's")
        XCTAssertGreaterThan(collected.count, 1)
    }

    /// Reads the board's event stream until its whole board holds the new strap's tile.
    static func waitForNewStrapTile(_ board: String) async throws -> [String: Any] {
        final class Found: Sendable { let line = Mutex<String?>(nil) }
        let found = Found()
        try await waitUntil(timeout: .seconds(60), "the new strap's tile on the event stream") {
            let stream = try curl(["-s", "-N", "--max-time", "2", "\(board)/events"])
            for line in stream.body.split(separator: "\n") where line.hasPrefix("data: ") && line.contains("\"strap:\(strap)\"") {
                found.line.withLock { $0 = String(line.dropFirst(6)) }
                return true
            }
            return false
        }
        let line = try XCTUnwrap(found.line.withLock { $0 })
        let update = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        return try XCTUnwrap((update["tiles"] as? [[String: Any]])?.first { $0["id"] as? String == "strap:\(strap)" })
    }

    static func post(_ board: String, origin: String, body: String, contentType: String = "application/json") throws -> (status: Int, body: String) {
        let answer = try curl([
            "-s", "--max-time", "20", "-w", "\n%{http_code}", "-H", "Origin: \(origin)", "-H", "Content-Type: \(contentType)",
            "--data-binary", body, "\(board)/api/sign-in",
        ])
        let lines = answer.body.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    /// Runs curl (a real HTTP client), answering what it printed.
    static func curl(_ arguments: [String]) throws -> (status: Int32, body: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
