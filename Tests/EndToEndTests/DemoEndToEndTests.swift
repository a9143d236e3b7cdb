import Foundation
import GatewayTesting
import HealthModel
import XCTest

/// What `healthgate demo` leaves behind: its own store, never the one `healthgate run` uses, and
/// no workout of its own still running; its ANT+ class, each strap worn by a participant of its own.
final class DemoEndToEndTests: XCTestCase {
    /// The participants wearing the demo's ANT+ class (six straps through a simulated stick).
    static let antClass = ["Quinn", "Rosa", "Sami", "Tom", "Uma", "Vera"]

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
        XCTAssertEqual(owners.sorted(), ["Ana", "Ben", "Cleo", "Dan"] + Self.antClass, list.standardOutput)
        // The ANT+ class's workouts collected their own straps' heart rates: a workout per strap.
        for workout in workouts where Self.antClass.contains(((workout["metadata"] as? [String: Any])?["healthgate.participant"] as? String) ?? "") {
            let statistics = workout["statistics"] as? [[String: Any]] ?? []
            let heartRate = statistics.first { $0["type"] as? String == "heartRate" }
            XCTAssertGreaterThan(heartRate?["sampleCount"] as? Int ?? 0, 0, "\(workout)")
        }

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
        XCTAssertEqual(workouts.count, 2 + Self.antClass.count, list.standardOutput + exit.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: healthgate.defaultDatabase.path))
    }

    /// The plain demo plays the ANT+ class: six straps through the simulated stick, each stored
    /// under its own device, and worn by its own participant while the demo runs.
    func testThePlainDemoHasAnANTClassEachStrapWornByAParticipant() async throws {
        let healthgate = try HealthgateExecutable()
        let (daemon, database) = try await healthgate.startDemo(store: "ant.sqlite")
        let list = try await healthgate.run(["participant", "list", "--format", "json"])
        XCTAssertEqual(list.status, 0, list.standardError)
        let roster = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.standardOutput.utf8)) as? [[String: Any]])
        XCTAssertEqual(roster.compactMap { $0["name"] as? String }, Self.antClass)
        let worn = roster.compactMap { ($0["devices"] as? [String])?.first }
        XCTAssertEqual(worn.count, Self.antClass.count)
        XCTAssertTrue(worn.allSatisfy { $0.hasPrefix("ant:120:") }, "\(worn)")
        try await waitUntil(timeout: .seconds(60), "heart rates from every strap of the class") {
            guard let query = try? await healthgate.run(
                ["query", "samples", "--type", "heartRate", "--source", "demo-ant-class", "--db", database, "--format", "json"]),
                let samples = try? JSONSerialization.jsonObject(with: Data(query.standardOutput.utf8)) as? [[String: Any]]
            else { return false }
            let devices = Set(samples.compactMap { ($0["device"] as? [String: Any])?["localIdentifier"] as? String })
            return devices == Set(worn)
        }
        try await daemon.terminate()
    }

    /// The demo's bike and its pedometer both count distance: a ride lists its cycling distance
    /// first (not the pedometer's few metres), and its power and cadence.
    func testARideOnTheDemoBikeListsItsCyclingDistancePowerAndCadence() async throws {
        let healthgate = try HealthgateExecutable()
        let (daemon, database) = try await healthgate.startDemo(store: "ride.sqlite")
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
        try await daemon.terminate()

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
