import Foundation
import GatewayTesting
import HealthModel
import XCTest

/// What `healthgate demo` leaves behind: its own store, never the one `healthgate run` uses, and
/// no workout of its own still running.
final class DemoEndToEndTests: XCTestCase {
    func testTheDemoWritesItsOwnStoreAndEndsItsGroupWorkoutWhenItStops() async throws {
        let healthgate = try HealthgateExecutable()
        let demoStore = healthgate.root.appendingPathComponent("state/healthgate/demo.sqlite")
        let demo = try await healthgate.run(["demo", "--participants", "4", "--listen", "127.0.0.1:0", "--duration", "4", "--quiet"])
        XCTAssertEqual(demo.status, 0, demo.standardError)
        let firstLine = demo.standardError.split(separator: "\n").first.map(String.init) ?? ""
        XCTAssertTrue(firstLine.contains(demoStore.path), "the first line names the demo's store: \(firstLine)")
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: healthgate.defaultDatabase.path),
            "the demo wrote into the store of 'healthgate run'")
        XCTAssertTrue(FileManager.default.fileExists(atPath: demoStore.path), demo.standardError)

        // Every workout the demo started is ended and stored.
        let list = try await healthgate.run(["workout", "list", "--db", demoStore.path, "--format", "json"])
        XCTAssertEqual(list.status, 0, list.standardError)
        let workouts = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.standardOutput.utf8)) as? [[String: Any]])
        let owners = workouts.compactMap { ($0["metadata"] as? [String: Any])?["healthgate.participant"] as? String }
        XCTAssertEqual(owners.sorted(), ["Ana", "Ben", "Cleo", "Dan"], list.standardOutput)

        // So the next demo on that store restores nothing.
        let again = try await healthgate.run(["demo", "--duration", "1", "--quiet"])
        XCTAssertEqual(again.status, 0, again.standardError)
        XCTAssertFalse(again.standardError.contains("restored"), again.standardError)
        XCTAssertFalse(again.standardError.contains("has a workout in the store"), again.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: healthgate.defaultDatabase.path))
    }

    func testSIGINTEndsTheGroupWorkoutToo() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("class.sqlite").path
        let daemon = try healthgate.start(["demo", "--participants", "2", "--listen", "127.0.0.1:0", "--db", database, "--quiet"])
        // Logged once the signals are watched.
        try await waitUntil(timeout: .seconds(60), "the gateway started") { daemon.standardError.contains("started with") }
        daemon.send(SIGINT)
        let exit = try await daemon.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(exit.status, 0, exit.standardError)
        let list = try await healthgate.run(["workout", "list", "--db", database, "--format", "json"])
        let workouts = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.standardOutput.utf8)) as? [[String: Any]])
        XCTAssertEqual(workouts.count, 2, list.standardOutput + exit.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: healthgate.defaultDatabase.path))
    }

    /// The demo's bike and its pedometer both count distance: a ride lists its cycling distance
    /// first (not the pedometer's few metres), and its power and cadence.
    func testARideOnTheDemoBikeListsItsCyclingDistancePowerAndCadence() async throws {
        let healthgate = try HealthgateExecutable()
        let database = healthgate.root.appendingPathComponent("ride.sqlite").path
        let daemon = try healthgate.start(["demo", "--db", database, "--quiet"])
        try await waitUntil(timeout: .seconds(60), "the control socket") {
            FileManager.default.fileExists(atPath: healthgate.controlSocket.path)
        }
        let start = try await healthgate.run(["workout", "start", "--activity", "cycling", "--format", "json"])
        XCTAssertEqual(start.status, 0, start.standardError)
        let started = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(start.standardOutput.utf8)) as? [String: Any])
        let id = try XCTUnwrap(started["workoutID"] as? String)
        try await waitUntil(timeout: .seconds(60), "the ride's power, cadence and distance") {
            guard let status = try? await healthgate.run(["workout", "status", "--format", "json"]),
                let snapshot = try? JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
            else { return false }
            return snapshot["power"] != nil && snapshot["cadence"] != nil && (snapshot["distanceMeters"] as? Double ?? 0) > 10
        }
        let end = try await healthgate.run(["workout", "end"])
        XCTAssertEqual(end.status, 0, end.standardError)
        daemon.send(SIGTERM)
        let exit = try await daemon.waitForExit(timeout: .seconds(30))
        XCTAssertEqual(exit.status, 0, exit.standardError)

        let json = try await healthgate.run(["workout", "show", id, "--db", database, "--format", "json"])
        let workout = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let statistics = try XCTUnwrap(workout["statistics"] as? [[String: Any]])
        let cycled = try XCTUnwrap(statistics.first { $0["type"] as? String == "distanceCycling" }?["sum"] as? Double)
        let kilometres = String(format: "%.2f km cycling", cycled / 1000)
        let list = try await healthgate.run(["workout", "list", "--db", database])
        XCTAssertEqual(list.status, 0, list.standardError)
        let row = try XCTUnwrap(list.standardOutput.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(row.contains(kilometres), "\(kilometres) in \(row)")
        let show = try await healthgate.run(["workout", "show", id, "--db", database])
        XCTAssertTrue(show.standardOutput.contains("distance   \(kilometres)"), show.standardOutput)
        XCTAssertTrue(show.standardOutput.contains("power      avg "), show.standardOutput)
        XCTAssertTrue(show.standardOutput.contains("cadence    avg "), show.standardOutput)
        // Each figure with its type's decimals, as the tables and the live lines print them:
        // whole beats per minute, watts, crank revolutions per minute and kilocalories.
        for (label, type) in [("heart rate avg", QuantityType.heartRate), ("power      avg", .cyclingPower),
                              ("cadence    avg", .cyclingCadence), ("energy", .activeEnergyBurned)] {
            let line = try XCTUnwrap(show.standardOutput.split(separator: "\n").first { $0.contains(label) }, label)
            XCTAssertEqual(type.fractionDigits, 0)
            XCTAssertFalse(line.contains("."), String(line))
        }
    }
}
