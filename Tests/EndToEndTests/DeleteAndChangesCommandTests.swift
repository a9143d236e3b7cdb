import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// `healthgate delete` and `healthgate query changes` run as a user runs them: the built
/// executable against a real store file, with the store's own writer committing beside it.
///
/// The heart rates are more than a series' gap (10 s) apart, so each is a quantity series of
/// one reading, named by that reading's uuid: `delete --id` takes it, and reading it back gives
/// a sample with a derived uuid whose `healthgate.series` names it.
final class DeleteAndChangesCommandTests: StoreTestCase {
    var healthgate: HealthgateExecutable!
    var samples: [QuantitySample] = []
    let cuff = Device(name: "BP7000", manufacturer: "Omron", localIdentifier: "00:5F:BF:12:34:56")

    override func setUp() async throws {
        try await super.setUp()
        healthgate = try HealthgateExecutable()
        let ids = makeIDs()
        samples = [
            try heartRate(ids, 60, at: 10), try heartRate(ids, 80, at: 25), try heartRate(ids, 90, at: 190),
            try steps(ids, 120, from: 3000, to: 4200),
        ]
        try await HealthStore(path: path).write(samples.map(HealthRecord.quantity))
    }

    override func tearDownWithError() throws {
        if let root = healthgate?.root { try? FileManager.default.removeItem(at: root) }
        try super.tearDownWithError()
    }

    /// The series each heart rate read back belongs to, in order: the uuids of the readings
    /// that named them.
    func heartRateSeries() async throws -> [String] {
        try await HealthStore(path: path, access: .readOnly).samples(of: .heartRate).map { sample in
            guard case .string(let series) = sample.metadata[.series] else { return "a plain sample \(sample.id)" }
            return series
        }
    }

    func changeSet(_ arguments: String...) async throws -> [String: Any] {
        let result = try await healthgate.run(["query", "changes", "--db", path, "--format", "json"] + arguments)
        XCTAssertEqual(result.status, 0, result.standardError)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    func testDeleteByIDThenChangesShowsTheTombstone() async throws {
        let before = try await changeSet()
        XCTAssertEqual(before["anchor"] as? Int, 4)
        XCTAssertEqual((before["added"] as? [Any])?.count, 4)

        let deleted = try await healthgate.run(["delete", "--yes", "--db", path, "--id", samples[1].id.uuidString])
        XCTAssertEqual(deleted.status, 0, deleted.standardError)
        XCTAssertTrue(deleted.standardOutput.contains(samples[1].id.uuidString), deleted.standardOutput)
        XCTAssertTrue(deleted.standardOutput.contains("deleted 1 object\n"), deleted.standardOutput)

        let after = try await changeSet("--anchor", "4")
        XCTAssertEqual(after["anchor"] as? Int, 5)
        XCTAssertEqual((after["added"] as? [Any])?.count, 0)
        let tombstones = try XCTUnwrap(after["deleted"] as? [[String: Any]])
        XCTAssertEqual(tombstones.count, 1)
        XCTAssertEqual(tombstones.first?["uuid"] as? String, samples[1].id.uuidString)
        XCTAssertEqual(tombstones.first?["change"] as? String, "deleted")
        XCTAssertEqual(tombstones.first?["type"] as? String, "heartRate")
        XCTAssertEqual(tombstones.first?["anchor"] as? Int, 5)
        XCTAssertEqual(tombstones.first?["kind"] as? String, "quantitySeries")
        let remaining = try await heartRateSeries()
        XCTAssertEqual(remaining, [samples[0].id.uuidString, samples[2].id.uuidString])

        // The same uuid again: gone, so a usage error that names it.
        try await healthgate.assertRun(["delete", "--yes", "--db", path, "--id", samples[1].id.uuidString], exits: 64, saying: "no object with uuid \(samples[1].id)")
    }

    func testDeleteByDeviceAndRangeAndByTypeAndRange() async throws {
        // The strap's samples starting in [0 s, 100 s): 60 and 80, not 90 (at 190 s).
        let byDevice = try await healthgate.run([
            "delete", "--yes", "--db", path, "--device", "AA:BB:CC:DD:EE:FF", "--since", "2027-01-16T00:00:00Z",
            "--until", "2027-01-16T00:01:40Z", "--format", "json",
        ])
        XCTAssertEqual(byDevice.status, 0, byDevice.standardError)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(byDevice.standardOutput.utf8)) as? [[String: String]])
        XCTAssertEqual(Set(rows.compactMap { $0["uuid"] }), [samples[0].id.uuidString, samples[1].id.uuidString])
        XCTAssertEqual(Set(rows.compactMap { $0["kind"] }), ["quantitySeries"])
        let heartRates = try await heartRateSeries()
        XCTAssertEqual(heartRates, [samples[2].id.uuidString])

        let byType = try await healthgate.run([
            "delete", "--yes", "--db", path, "--type", "stepCount", "--since", "2027-01-16", "--until", "2027-01-17", "--time-zone", "UTC",
        ])
        XCTAssertEqual(byType.status, 0, byType.standardError)
        let stepsLeft = try await HealthStore(path: path, access: .readOnly).samples(of: .stepCount)
        XCTAssertEqual(stepsLeft, [])
        let nothing = try await healthgate.run([
            "delete", "--yes", "--db", path, "--type", "stepCount", "--since", "2027-01-16", "--until", "2027-01-17", "--time-zone", "UTC",
        ])
        XCTAssertEqual(nothing.status, 0, nothing.standardError)
        XCTAssertTrue(nothing.standardOutput.contains("nothing matched"), nothing.standardOutput)

        let changes = try await changeSet("--anchor", "4")
        XCTAssertEqual((changes["deleted"] as? [Any])?.count, 3)

        for (arguments, message) in [
            (["--device", "strap"], "need a range"),
            (["--type", "heartRate", "--id", samples[2].id.uuidString], "exactly one of"),
            (["--type", "heartRat", "--last", "1d"], "unknown type \"heartRat\""),
            (["--id", "not-a-uuid"], "--id expects a uuid"),
            (["--type", "heartRate", "--since", "2027-01-17", "--until", "2027-01-16"], "the range is empty"),
        ] {
            let result = try await healthgate.run(["delete", "--yes", "--db", path] + arguments)
            XCTAssertEqual(result.status, 64, "\(arguments)")
            XCTAssertTrue(result.standardError.contains(message), "\(arguments): \(result.standardError)")
        }
        let missing = try await healthgate.run(["delete", "--yes", "--db", directory.appendingPathComponent("none.sqlite").path, "--id", samples[2].id.uuidString])
        XCTAssertEqual(missing.status, 66, missing.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("none.sqlite").path))
    }

    func testACorrelationIsDeletedWholeThroughOneMember() async throws {
        let ids = makeIDs()
        _ = (0..<10).map { _ in ids.next() }
        func member(_ type: QuantityType, _ value: Double) throws -> QuantitySample {
            try QuantitySample(
                id: ids.next(), type: type, quantity: Quantity(value, .millimeterOfMercury), start: at(600), end: at(600),
                device: cuff)
        }
        let systolic = try member(.bloodPressureSystolic, 121)
        let reading = try CorrelationSample.bloodPressure(
            id: ids.next(), systolic: systolic, diastolic: try member(.bloodPressureDiastolic, 79), device: cuff)
        let writer = try HealthStore(path: path)
        try await writer.write([.correlation(reading)])
        let deleted = try await writer.delete(.ids([systolic.id]))
        XCTAssertEqual(deleted.count, 3)
        XCTAssertEqual(Set(deleted.map(\.kind)), [.quantity, .correlation])
        XCTAssertEqual(try count("correlations"), 0)
        XCTAssertEqual(try count("correlation_members"), 0)
        XCTAssertEqual(try count("samples"), 1, "the steps")
        XCTAssertEqual(try count("quantity_series"), 3, "the heart rates")
    }

    func testDeleteIsRefusedWhileARunningWorkoutCollectsTheSamples() async throws {
        // A workout of heart rate from every device, started at 15 s, in progress.
        let workout = makeIDs().next()
        let hex = workout.bytes.map { String(format: "%02x", $0) }.joined()
        _ = try sqlite3("""
            INSERT INTO live_workouts (uuid, activity_type, first_activity_uuid, devices, types)
            VALUES (x'\(hex)', 'running', x'\(hex)', NULL, '["heartRate"]');
            INSERT INTO live_workout_events (workout_uuid, entry_index, action, at_us)
            VALUES (x'\(hex)', 0, 'start', \(StoreTime.microseconds(at(15))));
            """)
        let refused = try await healthgate.run([
            "delete", "--yes", "--db", path, "--type", "heartRate", "--since", "2027-01-16", "--until", "2027-01-17", "--time-zone", "UTC",
        ])
        XCTAssertEqual(refused.status, 75, refused.standardError)
        XCTAssertTrue(refused.standardError.contains("running workout"), refused.standardError)
        let untouched = try await HealthStore(path: path, access: .readOnly).samples(of: .heartRate)
        XCTAssertEqual(untouched.count, 3, "nothing was deleted")
        // Before the workout started: not its sample, deleted.
        let before = try await healthgate.run(["delete", "--yes", "--db", path, "--id", samples[0].id.uuidString])
        XCTAssertEqual(before.status, 0, before.standardError)
        // Steps are not among its types.
        let steps = try await healthgate.run(["delete", "--yes", "--db", path, "--id", samples[3].id.uuidString])
        XCTAssertEqual(steps.status, 0, steps.standardError)
    }

    func testFollowReceivesASampleCommittedAfterItStarted() async throws {
        let follow = try healthgate.start(["query", "changes", "--db", path, "--follow", "--anchor", "2"])
        // The backlog first: anchors 3 and 4.
        try await waitUntil(timeout: .seconds(30), "the backlog") { follow.standardOutput.split(separator: "\n").count >= 2 }
        let ids = makeIDs()
        _ = (0..<10).map { _ in ids.next() }
        let late = try heartRate(ids, 100, at: 600)
        try await HealthStore(path: path).write([.quantity(late)])
        try await waitUntil(timeout: .seconds(30), "the committed sample") {
            follow.standardOutput.contains(late.id.uuidString)
        }
        follow.send(SIGTERM)
        let result = try await follow.waitForExit()
        let lines = result.standardOutput.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        let anchors = lines.compactMap { $0?["anchor"] as? Int }
        XCTAssertEqual(anchors.count, lines.count, result.standardOutput)
        XCTAssertEqual(Array(anchors.prefix(2)), [3, 4], result.standardOutput)
        XCTAssertEqual(anchors, anchors.sorted(), result.standardOutput)
        // The reading started a series of its own (the strap's last one, 410 s before, is
        // closed in the same transaction), named by the reading's uuid and still open.
        let record = try XCTUnwrap(lines.last??["record"] as? [String: Any])
        XCTAssertEqual(record["kind"] as? String, "quantitySeries")
        let decoded = try HealthJSON.makeDecoder().decode(
            HealthRecord.self, from: try JSONSerialization.data(withJSONObject: record))
        guard case .quantitySeries(let series) = decoded else { return XCTFail("\(decoded)") }
        XCTAssertEqual(series.id, late.id)
        XCTAssertEqual(series.quantities, [SeriesQuantity(value: 100, start: late.startDate, end: late.endDate)])
        XCTAssertTrue(series.isProvisional)
    }

    func testChangesTableErrorsAndHelp() async throws {
        let table = try await healthgate.run(["query", "changes", "--db", path, "--type", "heartRate", "--limit", "2"])
        XCTAssertEqual(table.status, 0, table.standardError)
        // The steps took anchor 1, the strap's first two series 2 and 3.
        XCTAssertTrue(table.standardOutput.contains("anchor: 3 (more changes follow; pass --anchor 3)"), table.standardOutput)
        XCTAssertTrue(table.standardOutput.contains("  added   quantitySeries  heartRate  2027-01-16T00:00:10.000000Z  "), table.standardOutput)
        XCTAssertTrue(table.standardOutput.contains(samples[0].id.uuidString), table.standardOutput)
        try await healthgate.assertRun(["query", "changes", "--db", path, "--anchor", "99"], exits: 65, saying: "unknown anchor")
        let badLimit = try await healthgate.run(["query", "changes", "--db", path, "--limit", "0"])
        XCTAssertEqual(badLimit.status, 64)
        for command in [["query", "changes", "--help"], ["delete", "--help"]] {
            let help = try await healthgate.run(command)
            XCTAssertEqual(help.status, 0, help.standardError)
            XCTAssertTrue(help.standardOutput.contains("USAGE: healthgate \(command[0] == "delete" ? "delete" : "query changes")"),
                          help.standardOutput)
            XCTAssertTrue(help.standardOutput.contains("tombstone"), help.standardOutput)
        }
    }

    /// Without a terminal to ask on, `delete` and `dead-letters drop` act only with --yes: a
    /// script says what it means, and nothing is deleted by a command piped into (issue #45).
    func testDeleteAndDropRefuseWithoutATerminalAndWithoutYes() async throws {
        let id = samples[0].id.uuidString
        let refused = try await healthgate.run(["delete", "--db", path, "--id", id])
        XCTAssertEqual(refused.status, 64, refused.standardError)
        XCTAssertTrue(refused.standardError.contains("--yes"), refused.standardError)
        XCTAssertTrue(refused.standardError.contains("Delete the object \(id)"), refused.standardError)
        let untouched = try await changeSet()
        XCTAssertEqual((untouched["deleted"] as? [Any])?.count, 0, "nothing was deleted")
        let help = try await healthgate.run(["delete", "--help"])
        XCTAssertTrue(help.standardOutput.contains("--yes"), help.standardOutput)

        try await addRefusedDeadLetter()
        let notDropped = try await healthgate.run(["dead-letters", "drop", "--db", path])
        XCTAssertEqual(notDropped.status, 64, notDropped.standardError)
        XCTAssertTrue(notDropped.standardError.contains("Drop 1 dead letter?"), notDropped.standardError)
        XCTAssertTrue(notDropped.standardError.contains("--yes"), notDropped.standardError)
        let listed = try await healthgate.run(["dead-letters", "list", "--db", path, "--format", "json"])
        XCTAssertEqual(listed.standardOutput.split(separator: "\n").count, 1, listed.standardOutput)
        let dropped = try await healthgate.run(["dead-letters", "drop", "--yes", "--db", path])
        XCTAssertEqual(dropped.status, 0, dropped.standardError)
        XCTAssertTrue(dropped.standardOutput.contains("1 dead letter dropped"), dropped.standardOutput)
    }

    /// The repository's refusal (422) of the second sample, written to the store as a dead letter.
    private func addRefusedDeadLetter() async throws {
        let store = try HealthStore(path: path)
        try await store.addDeadLetters([
            DeadLetter(
                follower: "repository", id: samples[1].id, kind: .quantity, type: "heartRate", isDeletion: false, anchor: 2,
                payload: nil, status: 422, response: "refused", failedAt: Date(timeIntervalSince1970: 1_800_000_000)),
        ])
        await store.close()
    }

    /// `delete` and `dead-letters` open the store once, through the path every command uses: a
    /// missing store is 66 with the same words for each, said before any question, and never
    /// created; on a store, `retry` marks, a declined `drop` keeps, `drop --yes` removes and
    /// `delete` deletes.
    func testCommandsThatChangeTheStoreOpenItAsEveryCommandDoes() async throws {
        let missing = directory.appendingPathComponent("none.sqlite").path
        for arguments in [
            ["delete", "--id", samples[0].id.uuidString], ["delete", "--yes", "--id", samples[0].id.uuidString],
            ["dead-letters", "retry"], ["dead-letters", "drop"], ["dead-letters", "drop", "--yes"], ["dead-letters", "list"],
        ] {
            let result = try await healthgate.run(arguments + ["--db", missing])
            XCTAssertEqual(result.status, 66, "\(arguments): \(result.standardError)")
            XCTAssertTrue(
                result.standardError.contains("no store at \(missing); run 'healthgate run' or 'healthgate demo' first, or pass --db PATH"),
                "\(arguments): \(result.standardError)")
            XCTAssertFalse(result.standardError.contains("?"), "\(arguments) asked before finding the store: \(result.standardError)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: missing), "\(arguments) created the store")
        }

        try await addRefusedDeadLetter()
        let retried = try await healthgate.run(["dead-letters", "retry", "--db", path])
        XCTAssertEqual(retried.status, 0, retried.standardError)
        XCTAssertEqual(retried.standardOutput, "1 dead letter marked to be sent again\n")
        let marked = try await HealthStore(path: path, access: .readOnly).deadLetters()
        XCTAssertEqual(marked.map(\.retry), [true])
        let declined = try await healthgate.run(["dead-letters", "drop", "--db", path])
        XCTAssertEqual(declined.status, 64, declined.standardError)
        let kept = try await HealthStore(path: path, access: .readOnly).deadLetters()
        XCTAssertEqual(kept.count, 1, "kept")
        let dropped = try await healthgate.run(["dead-letters", "drop", "--yes", "--db", path])
        XCTAssertEqual(dropped.standardOutput, "1 dead letter dropped\n", dropped.standardError)
        let left = try await HealthStore(path: path, access: .readOnly).deadLetters()
        XCTAssertEqual(left.count, 0)

        let deleted = try await healthgate.run(["delete", "--yes", "--db", path, "--id", samples[0].id.uuidString])
        XCTAssertEqual(deleted.status, 0, deleted.standardError)
        let remaining = try await heartRateSeries()
        XCTAssertEqual(remaining, [samples[1].id.uuidString, samples[2].id.uuidString])
    }

    /// On a terminal `delete` asks, and deletes only on "y"; script(1) gives it the terminal.
    func testDeleteAsksOnATerminal() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            throw XCTSkip("no script(1) here to give the command a terminal")
        }
        let command = [healthgate.url.path, "delete", "--db", path, "--id", samples[2].id.uuidString].map { "'\($0)'" }
            .joined(separator: " ")
        for (answer, status, deletions) in [("n", 1, 0), ("y", 0, 1)] {
            let result = try runProcess("/bin/sh", ["-c", "printf '\(answer)\\n' | /usr/bin/script -qec \"\(command)\" /dev/null"])
            XCTAssertEqual(result.status, Int32(status), "answer \(answer): \(result.output) \(result.error)")
            XCTAssertTrue(result.output.contains("Delete the object \(samples[2].id.uuidString) from \(path)? [y/N]"), result.output)
            let changes = try await changeSet()
            XCTAssertEqual((changes["deleted"] as? [Any])?.count, deletions, "answer \(answer)")
        }
    }

    /// Issue #45: on a terminal, `delete` asks before it deletes: "n" keeps everything (exit 1),
    /// "y" deletes. script(1) gives the executable a real pseudo-terminal as stdin and copies
    /// what the test writes into it.
    func testDeleteAsksOnATerminalAndActsOnlyOnYes() async throws {
        let script = "/usr/bin/script"
        guard FileManager.default.isExecutableFile(atPath: script) else { throw XCTSkip("no script(1): install util-linux") }
        func onATerminal(_ arguments: [String], answer: String) throws -> (status: Int32, output: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: script)
            // -q: no banner; -e: its exit status is the command's; -c: the command, run on the pty.
            let command = ([healthgate.url.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
            process.arguments = ["-qec", command, "/dev/null"]
            process.environment = healthgate.environment
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try process.run()
            input.fileHandleForWriting.write(Data((answer + "\n").utf8))
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
        let id = samples[0].id.uuidString
        let declined = try onATerminal(["delete", "--db", path, "--id", id], answer: "n")
        XCTAssertEqual(declined.status, 1, declined.output)
        XCTAssertTrue(declined.output.contains("Delete the object \(id)"), declined.output)
        XCTAssertTrue(declined.output.contains("[y/N]"), declined.output)
        let kept = try await changeSet()
        XCTAssertEqual((kept["deleted"] as? [Any])?.count, 0, "n deletes nothing")

        let confirmed = try onATerminal(["delete", "--db", path, "--id", id], answer: "y")
        XCTAssertEqual(confirmed.status, 0, confirmed.output)
        XCTAssertTrue(confirmed.output.contains("deleted 1 object"), confirmed.output)
        let gone = try await changeSet()
        XCTAssertEqual((gone["deleted"] as? [Any])?.count, 1, "y deletes it")
    }
}
