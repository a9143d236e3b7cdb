import CSQLite
import Foundation

/// What a class costs the card, measured on the gateway itself (issue 64): `healthgate demo
/// --class 30` (the static release build: 20 ANT+ straps through the simulated stick, 6
/// broadcasting Polar straps, 4 connected straps, 30 workouts, the board, the `sqlite` sink as
/// the gateway runs it, with the metadata and the commits it makes), run for `short` and then for
/// `long` seconds, each into a store of its own, each stopped by `--duration` (a graceful stop).
///
/// - **Stored**: each store's file after the stop (the stop folds the write-ahead log in and
///   removes it: its absence is checked; a log left beside it is folded in before the file is
///   measured, so that a gateway that leaves one is measured whole too). Per heart-rate reading: the difference of the two files
///   over the difference of their readings, so that what every run stores once (the devices, the
///   workouts' statistics, the schema) is not counted against the readings. Against the budget of
///   16 B (a class's year in 8 GB), the information in a reading (a heart rate and an RR
///   interval: about 3.3 B) and Gorilla (1.37 B a point).
/// - **Written**: the bytes the process had the kernel write to storage (`write_bytes`, read as
///   this process's children's `ru_oublock` × 512 once the demo was reaped, so nothing it wrote
///   at its stop is missed), per heart-rate reading stored: for each run, and the difference of
///   the two over the difference of their readings. Against the budget of 1 000 B a reading.
///
/// No baseline process: the figures are bytes, not times, and the physical floor is stated.
/// The load is checked: each run stores at least one heart rate a second per strap.
enum ClassStoreBenchmark {
    static let straps = 30
    static let budgetStoredBytes = 16.0
    static let budgetWrittenBytes = 1000.0
    static let informationBytes = 3.33
    static let gorillaBytes = 1.37

    struct Run {
        var seconds: Int
        var readings: Int
        var fileBytes: Int
        var writtenBytes: Int
        var leftFiles: [String]
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(staticDirectory: String, short: Int, long: Int, report: inout Report) async throws {
        report.section("What a class costs the card: bytes stored and written per heart rate, through the gateway")
        report.line("Workload: `healthgate demo --class \(straps)` (static release build) for \(short) s and for \(long) s, each into "
            + "a new store, stopped by `--duration`. Stored: the file after the stop, the difference of the two runs over the "
            + "difference of their heart-rate readings. Written: the demo's `write_bytes` (children's `ru_oublock` × 512 after "
            + "it was reaped) per heart-rate reading, each run, and the difference likewise. No baseline process: bytes, "
            + "against the physical floor.")
        report.line("")
        let environment = try BenchmarkEnvironment(name: "class-store")
        defer { environment.removeAll() }
        let healthgate = URL(fileURLWithPath: staticDirectory).appendingPathComponent("healthgate").path
        var runs: [Run] = []
        for seconds in [short, long] {
            let run = try measure(healthgate, seconds: seconds, environment: environment)
            report.load(
                "heart rates stored by the \(seconds) s class (one a second per strap)", asked: Double(straps * seconds),
                got: Double(run.readings), share: 1)
            runs.append(run)
        }
        let (first, second) = (runs[0], runs[1])
        let readings = Double(second.readings - first.readings)
        let stored = Double(second.fileBytes - first.fileBytes) / readings
        let written = Double(second.writtenBytes - first.writtenBytes) / readings
        let year = stored * Double(straps) * 3600 * 12 * 365 / 1e9
        report.table(
            ["figure", "value", "budget", "met"],
            [
                ["bytes stored per heart-rate reading (difference of the runs)",
                 String(format: "%.1f B (a class's 12-hour day every day: %.1f GB a year); %.1f× the information, %.1f× Gorilla",
                        stored, year, stored / informationBytes, stored / gorillaBytes),
                 "≤ \(Int(budgetStoredBytes)) B", report.verdict(stored <= budgetStoredBytes)],
                ["bytes written per heart-rate reading (difference of the runs)", String(format: "%.0f B", written),
                 "≤ \(Int(budgetWrittenBytes)) B", report.verdict(written <= budgetWrittenBytes)],
                ["files beside the store after each stop",
                 runs.map { "\($0.seconds) s: " + ($0.leftFiles.isEmpty ? "none" : $0.leftFiles.joined(separator: ", ")) }
                    .joined(separator: "; "),
                 "none", report.verdict(runs.allSatisfy(\.leftFiles.isEmpty))],
            ] + runs.map { run in
                [String(format: "the %d s class: readings, file, written", run.seconds),
                 "\(Harness.format(Double(run.readings))), \(Harness.format(Double(run.fileBytes))) B, "
                    + String(format: "%@ B (%.0f B a reading)", Harness.format(Double(run.writtenBytes)), Double(run.writtenBytes) / Double(max(1, run.readings))),
                 "—", "–"]
            })
        let tables = try ClassDayBenchmark.pagesByTable(environment.path("class-\(long).sqlite"))
        report.line("Where the \(long) s class's bytes are (`dbstat`): "
            + tables.prefix(8).map { "\($0.0) \(Harness.format(Double($0.1))) B" }.joined(separator: ", ") + ".")
    }

    /// One demo class of `seconds`, its store, and what it wrote.
    static func measure(_ healthgate: String, seconds: Int, environment: BenchmarkEnvironment) throws -> Run {
        let store = environment.path("class-\(seconds).sqlite")
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        let before = Int(usage.ru_oublock)
        let process = try MemoryBenchmark.launch(
            healthgate, arguments: ["demo", "--class", String(straps), "--duration", String(seconds), "--db", store, "--quiet",
                                    "--listen", "127.0.0.1:0"],
            environment: environment)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let log = (try? String(contentsOfFile: MemoryBenchmark.stderrLog(of: healthgate, in: environment), encoding: .utf8)) ?? ""
            throw Failure(description: "healthgate demo --class exited with status \(process.terminationStatus): \(log.suffix(2000))")
        }
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        let written = (Int(usage.ru_oublock) - before) * 512
        let left = ["-wal", "-shm"].map { store + $0 }.filter { FileManager.default.fileExists(atPath: $0) }
        if !left.isEmpty { try foldLog(store) }
        return Run(
            seconds: seconds, readings: try storeCount(store, heartRateSampleCount), fileBytes: try ClassDayBenchmark.fileSize(store),
            writtenBytes: written, leftFiles: left.map { URL(fileURLWithPath: $0).lastPathComponent })
    }

    /// Folds a write-ahead log a stop left into the store (a gateway that did not close its last
    /// connection; what it stored is in the log), so that the file holds all of it.
    static func foldLog(_ store: String) throws {
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        guard sqlite3_open_v2(store, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
            sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nil, nil, nil) == SQLITE_OK
        else {
            throw Failure(description: "cannot fold the log into \(store): \(String(cString: sqlite3_errmsg(db)))")
        }
    }
}
