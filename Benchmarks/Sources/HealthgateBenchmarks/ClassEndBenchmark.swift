import CSQLite
import Dispatch
import Foundation
import HealthModel
import HealthStore
import HealthStoreTesting

/// Ending an hour-long class (issue #48): `healthgate workout end --all` for 30 workouts of an
/// hour, through the gateway as it runs.
///
/// Built first, outside every timed region, through the store's API
/// (``HealthStore/write(_:checkpoints:)`` in batches of 1000, then
/// ``HealthStore/appendToWorkoutJournal(_:from:of:)``): 30 straps × 1 hour of heart rate at 1 Hz
/// (108 000 readings, which the store's writer folds into quantity series as the gateway's
/// store does) and one 70-beat heartbeat series a minute per strap, ending now; the straps
/// are named as a class names them (10 ANT+ straps by their number, 10 broadcasting Polar straps
/// by the device id in their name, 10 connected straps by their address); and 30 live workouts,
/// one per participant wearing one strap, started an hour ago.
///
/// Then `healthgate run` (the `--static-dir` build) opens that store with the 30 participants
/// configured and restores their workouts (RSS read once `workout status --all` answers), and
/// `healthgate workout end --all` ends them. Measured: from the command's start until the store
/// holds all 30 workouts (whether the client answered within its 10 s, and when), the gateway's
/// RSS after it, and what each stored workout finds of itself (workouts reference their time and
/// devices, not rows: read back through ``HealthStore/workout(id:)``, each must find its strap's
/// 3 600 heart rates and 60 series and nothing of another strap, and its heart-rate statistics
/// must count the 3 600: the end read its own strap's hour, and all of it).
///
/// Baseline, same run: reading the same 108 000 heart rates with their devices once, plain SQL
/// on the sqlite3 C API (one statement over the plain samples, one over the quantity series,
/// each series' blob read into its quantities by hand, every column into a Swift value): what
/// one read of the class's hour costs. The ends together read that hour once in all (each its
/// own strap's 3 600); before issue #48's fix each end read it whole, 30 reads.
///
/// Budget: all 30 stored within the CLI client's 10 s answer. The load is checked: the store
/// must hold the 108 000 heart rates and the 30 workouts, each finding its strap's hour.
enum ClassEndBenchmark {
    static let straps = 30
    static let seconds = 3600
    static let seriesPerStrap = seconds / 60

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(staticDirectory: String, report: inout Report) async throws {
        report.section("class-end: `workout end --all` for \(straps) workouts of an hour")
        let healthgate = try staticProgram("healthgate", in: staticDirectory)
        report.line("Store built through `HealthStore.write` (batches of 1000) and `appendToWorkoutJournal`: \(straps) straps × "
            + "\(seconds) s of heart rate at 1 Hz, a 70-beat heartbeat series a minute per strap (10 straps named by ANT+ number, "
            + "10 by Polar device id, 10 by address), \(straps) live workouts started an hour ago. `\(healthgate) run` restores them; "
            + "timed: `workout end --all` until the store holds the \(straps) workouts. Baseline, same run: plain SQL on the "
            + "sqlite3 C API reading the same \(straps * seconds) heart rates (in quantity series) with their devices, every column "
            + "into a Swift value, each series' blob into its quantities.")
        report.line("")
        let environment = try BenchmarkEnvironment(name: "class-end")
        defer { environment.removeAll() }
        let storePath = environment.path("class.sqlite")
        let classStart = Date().addingTimeInterval(-Double(seconds) - 1)
        let identities = try await buildStore(at: storePath, classStart: classStart)

        // The baseline: the hour read once, plain SQL; best of 3.
        var baseline = Double.infinity
        var baselineRows = 0
        for _ in 0..<3 {
            let started = ContinuousClock.now
            baselineRows = try readHour(storePath, from: classStart)
            baseline = min(baseline, (ContinuousClock.now - started).benchmarkSeconds)
        }

        let controlSocket = environment.path("control.sock")
        let config = try writeConfiguration(environment: environment, identities: identities, store: storePath, controlSocket: controlSocket)
        let launched = ContinuousClock.now
        let gateway = try MemoryBenchmark.launch(healthgate, arguments: ["run", "--config", config], environment: environment)
        defer {
            if gateway.isRunning {
                kill(gateway.processIdentifier, SIGKILL)
                gateway.waitUntilExit()
            }
        }
        // Restored: `workout status --all` answers once every participant's workout is back
        // (each controller restores at its first command), each read back whole for the answer.
        while true {
            guard gateway.isRunning, ContinuousClock.now - launched < .seconds(120) else {
                throw Failure(description: "healthgate run did not answer on its control socket within 120 s")
            }
            if FileManager.default.fileExists(atPath: controlSocket),
                (try? await ClassBenchmark.command(healthgate, ["workout", "status", "--all", "--socket", controlSocket], environment: environment)) != nil
            { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let restoreSeconds = (ContinuousClock.now - launched).benchmarkSeconds
        let rssBefore = Harness.residentKiB(pid: gateway.processIdentifier) ?? 0

        let ending = ContinuousClock.now
        let answered = (try? await ClassBenchmark.command(healthgate, ["workout", "end", "--all", "--socket", controlSocket], environment: environment)) != nil
        let answerSeconds = (ContinuousClock.now - ending).benchmarkSeconds
        while (try? storeCount(storePath, "SELECT count(*) FROM workouts")) ?? 0 < straps, ContinuousClock.now - ending < .seconds(120) {
            try await Task.sleep(for: .milliseconds(50))
        }
        let storedSeconds = (ContinuousClock.now - ending).benchmarkSeconds
        try await Task.sleep(for: .seconds(2))
        let rssAfter = Harness.residentKiB(pid: gateway.processIdentifier) ?? 0
        let stop = await MemoryBenchmark.stop(gateway)

        let workouts = try storeCount(storePath, "SELECT count(*) FROM workouts")
        let found = try await workoutsFound(storePath)
        let heartRates = try storeCount(storePath, heartRateSampleCount)
        func mib(_ kib: Int) -> String { MemoryBenchmark.mib(kib) }
        report.table(
            ["side", "time", "ratio to the baseline"],
            [["`workout end --all`: all \(straps) workouts stored", String(format: "%.2f s", storedSeconds),
              String(format: "%.1f×", storedSeconds / baseline)],
             ["baseline: the hour's \(Harness.format(Double(baselineRows))) samples read once, plain SQL (best of 3)",
              String(format: "%.3f s", baseline), "1×"]])
        report.line("The client " + (answered ? String(format: "answered after %.2f s", answerSeconds)
            : String(format: "gave no answer (exited with an error after %.2f s)", answerSeconds))
            + String(format: "; the gateway restored the %d workouts and answered in %.1f s after its start. ", straps, restoreSeconds)
            + "RSS before the end \(mib(rssBefore)), after it (2 s after the last was stored) \(mib(rssAfter)). "
            + "Fewest heart rates and heartbeat series a stored workout finds of itself: \(Harness.format(Double(found.fewest))) "
            + "(of \(seconds + seriesPerStrap)); fewest heart rates its statistics count: \(Harness.format(Double(found.fewestCounted))) "
            + "(of \(seconds)); workouts finding only their own strap's: \(found.ownStrapOnly). "
            + "Gateway's graceful stop: \(stop).")
        report.load("heart-rate samples in the store", asked: Double(straps * seconds), got: Double(heartRates), share: 1)
        report.load("heart rates the baseline read", asked: Double(straps * seconds), got: Double(baselineRows), share: 1)
        report.load("workouts stored", asked: Double(straps), got: Double(workouts), share: 1)
        report.load("heart rates and series found by the workout that finds fewest", asked: Double(seconds + seriesPerStrap),
                    got: Double(found.fewest), share: 1)
        report.load("heart rates counted by the statistics of the workout that counts fewest", asked: Double(seconds),
                    got: Double(found.fewestCounted), share: 1)
        report.load("workouts finding only their own strap's records", asked: Double(straps), got: Double(found.ownStrapOnly), share: 1)
        report.line("Budget: all \(straps) stored within the CLI client's 10 s: " + String(format: "%.2f s, ", storedSeconds)
            + report.verdict(storedSeconds <= 10 && answered) + ".")
    }

    /// Writes the class's hour and its 30 live workouts; returns each strap's identity as its
    /// participant names it.
    static func buildStore(at path: String, classStart: Date) async throws -> [String] {
        let store = try HealthStore(path: path)
        let ids = SampleIDGenerator()
        // 10 ANT+ straps (a serial-number local identifier, the radio's ANT+ identity), 10
        // broadcasting Polar straps (the device id in the name), 10 connected by address.
        var devices: [Device] = []
        var identities: [String] = []
        for index in 0..<straps {
            switch index / 10 {
            case 0:
                let number = 0x1_0000 + index
                devices.append(Device(name: "HRM-Dual", manufacturer: "Garmin", localIdentifier: "garmin/\(number)",
                                      radioIdentifier: "ant:120:\(number)"))
                identities.append("ant:120:\(number)")
            case 1:
                let id = String(format: "%08X", 0xB000_0001 + index)
                devices.append(Device(name: "Polar H10 \(id)", manufacturer: "Polar Electro Oy", radioIdentifier: id))
                identities.append(id)
            default:
                let address = String(format: "02:00:00:00:01:%02X", index)
                devices.append(Device(name: "HRM Pro", localIdentifier: address, radioIdentifier: address))
                identities.append(address)
            }
        }
        var pending: [HealthRecord] = []
        func flush() async throws {
            guard !pending.isEmpty else { return }
            try await store.write(pending)
            pending.removeAll(keepingCapacity: true)
        }
        for second in 0..<seconds {
            let date = classStart.addingTimeInterval(Double(second))
            for strap in 0..<straps {
                pending.append(.quantity(try QuantitySample(
                    id: ids.next(), type: .heartRate, quantity: Quantity(Double(90 + (second + strap) % 80), .countPerMinute),
                    start: date, end: date, device: devices[strap])))
                if pending.count == 1000 { try await flush() }
            }
            if second % 60 == 59 {
                for strap in 0..<straps {
                    let start = date.addingTimeInterval(-59)
                    let beats = StrapBeats.series(strap: strap, count: 70)
                    pending.append(.heartbeatSeries(try HeartbeatSeriesSample(
                        id: ids.next(), start: start, end: start.addingTimeInterval(59), beats: beats, device: devices[strap])))
                    if pending.count == 1000 { try await flush() }
                }
            }
        }
        try await flush()
        // The journal's calls block until committed: off the cooperative pool.
        let definitions = (0..<straps).map { strap in
            WorkoutDefinition(
                id: ids.next(), activityType: .highIntensityIntervalTraining, firstActivityID: ids.next(),
                devices: [identities[strap]], types: WorkoutDefinition.defaultTypes(for: .highIntensityIntervalTraining),
                participant: "P\(strap)")
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async {
                do {
                    for definition in definitions {
                        try store.appendToWorkoutJournal(
                            [WorkoutJournalEntry(action: .prepare, date: classStart), WorkoutJournalEntry(action: .start, date: classStart)],
                            from: 0, of: definition)
                    }
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        try await store.checkpointLog()
        await store.close()
        return identities
    }

    /// What the stored workouts find of themselves, read back through the store
    /// (``HealthStore/workout(id:)``): the fewest heart rates and heartbeat series any finds, the
    /// fewest heart rates any one's statistics count, and how many find records of one strap only.
    static func workoutsFound(_ path: String) async throws -> (fewest: Int, fewestCounted: Int, ownStrapOnly: Int) {
        let store = try await HealthStore.open(path: path, access: .readOnly)
        var found = (fewest: Int.max, fewestCounted: Int.max, ownStrapOnly: 0)
        for workout in try await store.workouts() {
            guard let stored = try await store.workout(id: workout.id) else { continue }
            let heartRates = stored.samples.filter { $0.type == .heartRate }
            found.fewest = min(found.fewest, heartRates.count + stored.heartbeatSeries.count)
            found.fewestCounted = min(found.fewestCounted, workout.statistics(for: .heartRate)?.sampleCount ?? 0)
            let devices = Set(heartRates.map { $0.device?.radioIdentifier } + stored.heartbeatSeries.map { $0.device?.radioIdentifier })
            if devices.count == 1 { found.ownStrapOnly += 1 }
        }
        return found.fewest == .max ? (0, 0, 0) : found
    }

    /// The hour's heart rates with their devices, read once on the C API: one statement over the
    /// plain samples and one over the quantity series (those starting up to the type's longest
    /// span before the hour, whose later quantities may reach into it), every column into a Swift
    /// value, each series' blob into its quantities. Returns how many heart rates it read.
    static func readHour(_ path: String, from start: Date) throws -> Int {
        var db: OpaquePointer?
        defer { sqlite3_close(db) }
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
            throw Failure(description: "\(path): cannot open it")
        }
        let plain = """
            SELECT s.uuid, s.type_id, s.value, s.unit_id, s.original_value, s.start_us, s.duration_us, s.metadata_set_id,
                d.name, d.manufacturer, d.model, d.local_identifier, d.radio_identifier
            FROM samples s LEFT JOIN devices d ON d.id = s.device_id
            WHERE s.type_id = (SELECT id FROM quantity_types WHERE identifier = 'heartRate') AND s.start_us >= ?1
            ORDER BY s.start_us + s.duration_us, s.uuid
            """
        let series = """
            SELECT q.start_us, q.quantities, q.uuid, q.type_id, q.unit_id, q.version, q.open, q.metadata_set_id,
                d.name, d.manufacturer, d.model, d.local_identifier, d.radio_identifier
            FROM quantity_series q LEFT JOIN devices d ON d.id = q.device_id, quantity_types t
            WHERE t.identifier = 'heartRate' AND q.type_id = t.id AND q.start_us >= ?1 - t.max_series_span_us AND q.end_us >= ?1
            ORDER BY q.start_us, q.uuid
            """
        let from = Int64((start.timeIntervalSince1970 * 1e6).rounded(.down))
        var rows = 0
        for sql in [plain, series] {
            var statement: OpaquePointer?
            defer { sqlite3_finalize(statement) }
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                throw Failure(description: "prepare: \(String(cString: sqlite3_errmsg(db)))")
            }
            sqlite3_bind_int64(statement, 1, from)
            let isSeries = sql == series
            while sqlite3_step(statement) == SQLITE_ROW {
                readEveryColumn(statement)
                guard isSeries else {
                    rows += 1
                    continue
                }
                let seriesStart = sqlite3_column_int64(statement, 0)
                try BaselineSeriesDecoder.forEach(sqlite3_column_blob(statement, 1), count: Int(sqlite3_column_bytes(statement, 1))) {
                    quantity in
                    let at = seriesStart + quantity.offset
                    blackHole((at, at + quantity.duration, quantity.value))
                    if at >= from { rows += 1 }
                }
            }
        }
        return rows
    }

    /// The gateway's configuration: no sources, the 30 participants wearing the straps, the store.
    static func writeConfiguration(
        environment: BenchmarkEnvironment, identities: [String], store: String, controlSocket: String
    ) throws -> String {
        let configuration: [String: Any] = [
            "sources": [[String: Any]](),
            "sinks": [["kind": "sqlite"]],
            "store": ["path": store],
            "profile": ["maximumHeartRate": 190],
            "participants": identities.enumerated().map { index, identity in ["name": "P\(index)", "devices": [identity]] },
            "controlSocket": controlSocket,
            "logLevel": "warning",
        ]
        let path = environment.path("class-end.json")
        try JSONSerialization.data(withJSONObject: configuration, options: [.prettyPrinted, .sortedKeys]).write(to: URL(fileURLWithPath: path))
        return path
    }
}
