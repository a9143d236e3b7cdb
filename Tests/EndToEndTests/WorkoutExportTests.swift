import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// `healthgate workout export` end to end: a stored 10-minute ride with two laps and a pause is
/// exported as FIT and TCX by the built executable; fitdecode (PyPI) and Python's XML parser
/// read the files back (Tests/Exports/decode_exports.py), and their records, laps, totals and
/// pauses must be the stored workout's.
final class WorkoutExportTests: XCTestCase {
    let start = Date(timeIntervalSince1970: 1_795_676_400)  // 2026-11-26T07:00:00Z
    let bike = Device(name: "Trainer", localIdentifier: "C0:FF:EE:00:00:01")

    let pedometer = Device(name: "Clip", localIdentifier: "SIM-PED-0001")

    /// One reading a second for 600 s from `start`, none while paused (300–360 s): heart rate
    /// climbing from 100, power 150–199, cadence 85, 8 m/s and 8 m a second; and a pedometer
    /// clipped on, whose 0.5 m a second of walking distance is not the ride's distance.
    func ride(start: Date? = nil) throws -> (Workout, [QuantitySample]) {
        let start = start ?? self.start
        let ids = SampleIDGenerator(seed: 12)
        var samples: [QuantitySample] = []
        for second in 1...600 where !(300..<360).contains(second) {
            let end = start.addingTimeInterval(Double(second))
            func add(_ type: QuantityType, _ value: Double, _ unit: HealthUnit, interval: Bool = false, device: Device? = nil) throws {
                samples.append(try QuantitySample(
                    id: ids.next(), type: type, quantity: Quantity(value, unit), start: interval ? end.addingTimeInterval(-1) : end,
                    end: end, device: device ?? bike))
            }
            try add(.heartRate, 100 + Double(second / 10), .countPerMinute)
            try add(.cyclingPower, 150 + Double(second % 50), .watt)
            try add(.cyclingCadence, 85, .countPerMinute)
            try add(.cyclingSpeed, 8, .meterPerSecond)
            try add(.distanceCycling, 8, .meter, interval: true)
            try add(.distanceWalkingRunning, 0.5, .meter, interval: true, device: pedometer)
        }
        let at = { (seconds: Double) in start.addingTimeInterval(seconds) }
        let end = at(600)
        let rates = samples.filter { $0.type == .heartRate }.map(\.canonicalValue)
        let powers = samples.filter { $0.type == .cyclingPower }.map(\.canonicalValue)
        let workout = Workout(
            id: ids.next(), activityType: .cycling, startDate: start, endDate: end, duration: 540,
            events: [
                WorkoutEvent(type: .lap, startDate: at(200)), WorkoutEvent(type: .pause, startDate: at(300)),
                WorkoutEvent(type: .resume, startDate: at(360)), WorkoutEvent(type: .lap, startDate: at(450)),
            ],
            statistics: [
                QuantityStatistics(
                    type: .heartRate, startDate: start, endDate: end, sampleCount: rates.count,
                    average: rates.reduce(0, +) / Double(rates.count), minimum: rates.min(), maximum: rates.max()),
                QuantityStatistics(
                    type: .cyclingPower, startDate: start, endDate: end, sampleCount: powers.count,
                    average: powers.reduce(0, +) / Double(powers.count), minimum: powers.min(), maximum: powers.max()),
                QuantityStatistics(
                    type: .cyclingCadence, startDate: start, endDate: end, sampleCount: 540, average: 85, minimum: 85, maximum: 85),
                QuantityStatistics(
                    type: .cyclingSpeed, startDate: start, endDate: end, sampleCount: 540, average: 8, minimum: 8, maximum: 8),
                QuantityStatistics(type: .distanceWalkingRunning, startDate: start, endDate: end, sampleCount: 540, sum: 270),
                QuantityStatistics(type: .distanceCycling, startDate: start, endDate: end, sampleCount: 540, sum: 4320),
                QuantityStatistics(type: .activeEnergyBurned, startDate: start, endDate: end, sampleCount: 1, sum: 123),
            ])
        return (workout, samples)
    }

    /// The exported files hold health data: 0600, also when one replaces a file readable by all
    /// (issue #45; before, they were written 0644).
    func testExportsAndChartsAreReadableByTheUserAlone() async throws {
        let executable = try HealthgateExecutable()
        let database = executable.root.appendingPathComponent("store.sqlite").path
        let (workout, samples) = try ride()
        try await HealthStore(path: database).write(samples.map(HealthRecord.quantity) + [.workout(workout)])
        let replaced = executable.root.appendingPathComponent("ride.fit").path
        XCTAssertTrue(FileManager.default.createFile(atPath: replaced, contents: Data(), attributes: [.posixPermissions: 0o644]))
        let runs: [(String, [String])] = [
            (replaced, ["workout", "export", "\(workout.id)", "--format", "fit", "--output", replaced]),
            (executable.root.appendingPathComponent("ride.tcx").path, ["workout", "export", "\(workout.id)", "--format", "tcx"]),
            (executable.root.appendingPathComponent("ride.svg").path, ["workout", "chart", "\(workout.id)"]),
        ]
        for (output, arguments) in runs {
            let full = arguments + (arguments.contains("--output") ? [] : ["--output", output]) + ["--db", database]
            let result = try await executable.run(full)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.standardError)")
            let mode = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: output)[.posixPermissions] as? NSNumber)
            XCTAssertEqual(mode.intValue & 0o777, 0o600, "\(output) is \(String(mode.intValue & 0o777, radix: 8))")
        }
    }

    func testFITAndTCXReadBackByIndependentDecoders() async throws {
        let executable = try HealthgateExecutable()
        let database = executable.root.appendingPathComponent("store.sqlite").path
        let (workout, samples) = try ride()
        try await HealthStore(path: database).write(samples.map(HealthRecord.quantity) + [.workout(workout)])
        let fit = executable.root.appendingPathComponent("ride.fit").path
        let tcx = executable.root.appendingPathComponent("ride.tcx").path
        for (format, output) in [("fit", fit), ("tcx", tcx)] {
            let result = try await executable.run(["workout", "export", "\(workout.id)", "--format", format, "--output", output, "--db", database])
            XCTAssertEqual(result.status, 0, result.standardError)
            XCTAssertTrue(result.standardOutput.contains("wrote \(output)"), result.standardOutput)
        }
        let refused = try await executable.run(["workout", "export", "\(workout.id)", "--format", "gpx", "--db", database])
        XCTAssertEqual(refused.status, 64)
        XCTAssertTrue(refused.standardError.contains(#"unknown --format "gpx" (one of: fit, tcx)"#) && !refused.standardError.contains("did you mean"), refused.standardError)

        let decoded = try await decode(fit, tcx)
        let messages = try XCTUnwrap(decoded["fit"] as? [String: [[String: Any]]])
        // Records: one a second with a reading, 540 of them, with the stored values.
        let records = try XCTUnwrap(messages["record"])
        XCTAssertEqual(records.count, 540)
        let first = try XCTUnwrap(records.first)
        XCTAssertEqual(first["timestamp"] as? String, "2026-11-26T07:00:01+00:00")
        XCTAssertEqual(first["heart_rate"] as? Int, 100)
        XCTAssertEqual(first["power"] as? Int, 151)
        XCTAssertEqual(first["cadence"] as? Int, 85)
        XCTAssertEqual(try XCTUnwrap(first["speed"] as? Double), 8, accuracy: 0.001)
        XCTAssertEqual(try XCTUnwrap(first["distance"] as? Double), 8, accuracy: 0.01)
        let last = try XCTUnwrap(records.last)
        XCTAssertEqual(last["heart_rate"] as? Int, 160)
        XCTAssertEqual(try XCTUnwrap(last["distance"] as? Double), 4320, accuracy: 0.01)
        XCTAssertFalse(records.contains { ($0["timestamp"] as? String).map { $0 > "2026-11-26T07:05:00+00:00" && $0 < "2026-11-26T07:06:00+00:00" } ?? false },
                       "no record while paused")
        // Pauses: the timer starts, stops at the pause, starts at the resume, stops at the end.
        let timer = try XCTUnwrap(messages["event"]).filter { $0["event"] as? String == "timer" }
        XCTAssertEqual(timer.map { $0["event_type"] as? String }, ["start", "stop_all", "start", "stop_all"])
        XCTAssertEqual(timer.map { $0["timestamp"] as? String }, [
            "2026-11-26T07:00:00+00:00", "2026-11-26T07:05:00+00:00", "2026-11-26T07:06:00+00:00", "2026-11-26T07:10:00+00:00",
        ])
        // Laps: 0–200 s, 200–450 s (60 s of it paused), 450–600 s.
        let laps = try XCTUnwrap(messages["lap"])
        XCTAssertEqual(laps.map { $0["total_elapsed_time"] as? Double }, [200, 250, 150])
        XCTAssertEqual(laps.map { $0["total_timer_time"] as? Double }, [200, 190, 150])
        XCTAssertEqual(laps.map { $0["total_distance"] as? Double }, [1600, 1520, 1200])
        XCTAssertEqual(laps.map { $0["max_heart_rate"] as? Int }, [120, 145, 160])
        XCTAssertEqual(laps.map { $0["avg_cadence"] as? Int }, [85, 85, 85])
        XCTAssertEqual(laps.map { $0["max_power"] as? Int }, [199, 199, 199])
        XCTAssertEqual(laps.first?["avg_power"] as? Int, Int((Self.averagePower(samples, seconds: 1...200)).rounded()))
        // The session: the workout's totals.
        let session = try XCTUnwrap(messages["session"]?.first)
        XCTAssertEqual(session["sport"] as? String, "cycling")
        XCTAssertEqual(session["start_time"] as? String, "2026-11-26T07:00:00+00:00")
        XCTAssertEqual(session["total_elapsed_time"] as? Double, 600)
        XCTAssertEqual(session["total_timer_time"] as? Double, 540)
        XCTAssertEqual(session["total_distance"] as? Double, 4320)
        XCTAssertEqual(session["total_calories"] as? Int, 123)
        XCTAssertEqual(session["max_heart_rate"] as? Int, 160)
        XCTAssertEqual(session["avg_heart_rate"] as? Int, Int(try XCTUnwrap(workout.statistics(for: .heartRate)?.average).rounded()))
        XCTAssertEqual(session["max_power"] as? Int, 199)
        XCTAssertEqual(session["avg_cadence"] as? Int, 85)
        XCTAssertEqual(session["max_cadence"] as? Int, 85)
        XCTAssertEqual(session["num_laps"] as? Int, 3)
        XCTAssertEqual(messages["activity"]?.first?["num_sessions"] as? Int, 1)
        XCTAssertEqual(messages["activity"]?.first?["total_timer_time"] as? Double, 540)
        XCTAssertEqual(messages["file_id"]?.first?["type"] as? String, "activity")

        // TCX: the same laps and trackpoints.
        let training = try XCTUnwrap(decoded["tcx"] as? [String: Any])
        XCTAssertEqual(training["sport"] as? String, "Biking")
        let tcxLaps = try XCTUnwrap(training["laps"] as? [[String: Any]])
        XCTAssertEqual(tcxLaps.map { $0["seconds"] as? Double }, [200, 190, 150])
        XCTAssertEqual(tcxLaps.map { $0["distance"] as? Double }, [1600, 1520, 1200])
        XCTAssertEqual(tcxLaps.map { $0["maximumHeartRate"] as? Int }, [120, 145, 160])
        XCTAssertEqual(tcxLaps.map { $0["cadence"] as? Int }, [85, 85, 85])
        XCTAssertEqual(tcxLaps.first?["averageWatts"] as? Int, Int((Self.averagePower(samples, seconds: 1...200)).rounded()))
        let points = tcxLaps.flatMap { ($0["points"] as? [[String: Any]]) ?? [] }
        XCTAssertEqual(points.count, 540)
        XCTAssertEqual(points.first?["heartRate"] as? String, "100")
        XCTAssertEqual(points.first?["watts"] as? String, "151")
        XCTAssertEqual(points.last?["distance"] as? String, "4320.00")
    }

    /// `workout list` and `workout show` give each kind of distance, the ride's own first, and
    /// its power and cadence.
    func testListAndShowGiveEachKindOfDistanceAndThePowerAndCadence() async throws {
        let executable = try HealthgateExecutable()
        let database = executable.root.appendingPathComponent("store.sqlite").path
        let (workout, samples) = try ride()
        try await HealthStore(path: database).write(samples.map(HealthRecord.quantity) + [.workout(workout)])
        let power = try XCTUnwrap(workout.statistics(for: .cyclingPower)?.average)

        let list = try await executable.run(["workout", "list", "--db", database])
        XCTAssertEqual(list.status, 0, list.standardError)
        let lines = list.standardOutput.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, list.standardOutput)
        for column in ["DISTANCE", "AVG POWER W", "AVG CADENCE /MIN"] {
            XCTAssertTrue(lines[0].contains(column), lines[0])
        }
        XCTAssertTrue(lines[1].contains("4.32 km cycling, 0.27 km walking/running"), lines[1])
        XCTAssertTrue(lines[1].contains(" \(Int(power.rounded())) "), lines[1])
        XCTAssertTrue(lines[1].contains(" 85 "), lines[1])

        let show = try await executable.run(["workout", "show", "\(workout.id)", "--db", database])
        XCTAssertEqual(show.status, 0, show.standardError)
        XCTAssertTrue(show.standardOutput.contains("distance   4.32 km cycling, 0.27 km walking/running"), show.standardOutput)
        XCTAssertTrue(show.standardOutput.contains("power      avg \(Int(power.rounded())) max 199 W"), show.standardOutput)
        XCTAssertTrue(show.standardOutput.contains("cadence    avg 85 max 85 /min"), show.standardOutput)
    }

    /// Once `store.retentionDays` pruned a ride's samples, its chart and its files come from the
    /// workout's 5-second curves, and say so: a record (trackpoint) per curve point, the mean
    /// heart rate and power over it, the distance added up, the laps and totals as before; with
    /// `store.keepWorkoutSamples` the samples stay and the file has its record a second.
    func testAPrunedRideChartsAndExportsFromItsCurves() async throws {
        let executable = try HealthgateExecutable()
        // Ten days ago, on whole seconds, so the 5-second steps fall on whole seconds too.
        let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 10 * 86_400).rounded(.down))
        let (workout, samples) = try ride(start: start)
        var files: [Bool: (fit: String, tcx: String)] = [:]
        for keep in [false, true] {
            let database = executable.root.appendingPathComponent("store-\(keep).sqlite").path
            // As a gateway stores them: the readings as they come, the workout at its end (its
            // curves condensed from what the store holds then), every series closed at the stop.
            let store = try HealthStore(path: database)
            try await store.write(samples.map(HealthRecord.quantity))
            try await store.write([.workout(workout)])
            await store.close()
            let run = try await executable.runPruning(database, keepWorkoutSamples: keep, configurationName: "config-\(keep).json")
            XCTAssertEqual(run.status, 0, run.standardError)
            XCTAssertEqual(run.standardError.contains("quantity series and 0 heartbeat series ended before"), !keep, run.standardError)

            let fit = executable.root.appendingPathComponent("ride-\(keep).fit").path
            let tcx = executable.root.appendingPathComponent("ride-\(keep).tcx").path
            let svg = executable.root.appendingPathComponent("ride-\(keep).svg").path
            for arguments in [
                ["workout", "export", "\(workout.id)", "--format", "fit", "--output", fit],
                ["workout", "export", "\(workout.id)", "--format", "tcx", "--output", tcx],
                ["workout", "chart", "\(workout.id)", "--output", svg],
            ] {
                let result = try await executable.run(arguments + ["--db", database])
                XCTAssertEqual(result.status, 0, result.standardError)
                XCTAssertEqual(
                    result.standardError.contains("from the workout's 5-second curves (their raw samples were pruned: store.retentionDays)"),
                    !keep, "\(arguments): \(result.standardError)")
            }
            let chart = try String(contentsOfFile: svg, encoding: .utf8)
            XCTAssertTrue(chart.contains("<polyline class=\"heart-rate\""), chart)
            XCTAssertTrue(chart.contains("<polyline class=\"power\""), chart)
            let show = try await executable.run(["workout", "show", "\(workout.id)", "--db", database])
            XCTAssertEqual(show.standardOutput.contains("  charts     cyclingCadence, cyclingPower, cyclingSpeed, distanceCycling, distanceWalkingRunning and heartRate from the workout's 5-second curves"), !keep, show.standardOutput)
            files[keep] = (fit, tcx)
        }

        let kept = try await decode(try XCTUnwrap(files[true]?.fit), try XCTUnwrap(files[true]?.tcx))
        XCTAssertEqual((kept["fit"] as? [String: [[String: Any]]])?["record"]?.count, 540, "keepWorkoutSamples: a record a second")

        let decoded = try await decode(try XCTUnwrap(files[false]?.fit), try XCTUnwrap(files[false]?.tcx))
        let messages = try XCTUnwrap(decoded["fit"] as? [String: [[String: Any]]])
        let records = try XCTUnwrap(messages["record"])
        // A record where a 5-second step ends: 60 before the pause, the resume, 48 after it.
        XCTAssertEqual(records.count, 109)
        let seconds = try records.map { record -> Int in
            let text = try XCTUnwrap(record["timestamp"] as? String)
            let date = try XCTUnwrap(ISO8601DateFormatter().date(from: text))
            return Int(date.timeIntervalSince(start).rounded())
        }
        XCTAssertTrue(seconds.allSatisfy { $0 % 5 == 0 && $0 > 0 && $0 <= 600 }, "\(seconds)")
        XCTAssertEqual(records.first?["heart_rate"] as? Int, 100, "the mean of the first step")
        XCTAssertEqual(records.first?["cadence"] as? Int, 85)
        XCTAssertEqual(try XCTUnwrap(records.last?["distance"] as? Double), 4320, accuracy: 0.01, "the distance adds up")
        XCTAssertEqual(records.last?["heart_rate"] as? Int, 160)
        let laps = try XCTUnwrap(messages["lap"])
        XCTAssertEqual(laps.map { $0["total_distance"] as? Double }, [1600, 1520, 1200])
        XCTAssertEqual(laps.map { $0["total_timer_time"] as? Double }, [200, 190, 150])
        let session = try XCTUnwrap(messages["session"]?.first)
        XCTAssertEqual(session["total_distance"] as? Double, 4320)
        XCTAssertEqual(session["max_heart_rate"] as? Int, 160)
        XCTAssertEqual(session["max_power"] as? Int, 199, "the workout's own statistics, not the curve's means")
        let training = try XCTUnwrap(decoded["tcx"] as? [String: Any])
        let points = try XCTUnwrap(training["laps"] as? [[String: Any]]).flatMap { ($0["points"] as? [[String: Any]]) ?? [] }
        XCTAssertEqual(points.count, 109)
        XCTAssertEqual(points.last?["distance"] as? String, "4320.00")
    }

    static func averagePower(_ samples: [QuantitySample], seconds: ClosedRange<Int>) -> Double {
        let start = Date(timeIntervalSince1970: 1_795_676_400)
        let powers = samples.filter { sample in
            sample.type == .cyclingPower && seconds.contains(Int(sample.endDate.timeIntervalSince(start)))
        }.map(\.canonicalValue)
        return powers.reduce(0, +) / Double(powers.count)
    }

    func decode(_ fit: String, _ tcx: String) async throws -> [String: Any] {
        let result = try await TestPython.run("Tests/Exports/decode_exports.py", [fit, tcx])
        XCTAssertEqual(result.status, 0, result.errors)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
    }
}
