import Foundation
import HealthStoreTesting
import HealthModel
import HealthStore
import SampleBus
import Synchronization

/// The upgrade of a gym's stored class-week (issue 57): 7 class-days (30 straps × 12 h of heart
/// rate at 1 Hz, a 70-beat heartbeat series a minute per strap, 12 one-hour classes of 30
/// workouts a day) stored as the release before quantity series stored them, at schema 14: made
/// by ``PreviousSchemaStore/makeClassDays(path:days:straps:hours:beatsPerSeries:start:)`` with
/// that schema's own migrations and rows in its shape (every heart rate a row, every beat a row
/// of `heartbeats`, every workout linked to each sample and series in `workout_samples`), once,
/// and cached as `class-week-v14.sqlite` in the cache directory (made again when it is not at
/// version 14 or lacks a sample). Each run migrates a copy, written to the disk and dropped
/// from the page cache first, as a gateway finds its store after an upgrade and a reboot.
///
/// Measured, as the gateway upgrades it: opening the store with the current code (the
/// synchronous part of the upgrade: schema 15's DDL and its foreign-key check, timed), then the
/// background migration run to the end (`StoreMaintenance`'s loop: ``HealthStore/migrateBatch(seriesLimit:linkLimit:)``
/// with the gateway's batch sizes and a yield between batches, each batch timed) while a writer
/// keeps ingesting a class of 30 in real time, as the SQLite sink commits it (a transaction
/// every 100 ms with that tenth of a second's readings, a minute's heartbeat series every
/// minute); each ingest write is timed from its call to its return. Then the same writer alone
/// for as long (at least 30 s, at most 120 s): the ingest writes' own longest, the baseline.
/// Reported: the migration's time and batches, the process's peak RSS from opening to the
/// migration's end (VmHWM, reset before opening), the longest ingest write while migration
/// batches held the writer (its wait for a batch included) against the longest alone, and the
/// longest migration batch.
///
/// The load is checked: the class-week holds what was made; every step of the migration
/// finished with every series moved and every link deleted, the old tables dropped; the first
/// class's 30 workouts each still find their strap's 3 600 heart rates and 60 series, of that
/// strap alone (now by time and device); the writer made its ten writes a second and the store
/// holds every heart rate it wrote. No budget is set (issue 57 asks for the figures).
enum MigrationBenchmark {
    static let days = 7
    static let straps = 30
    static let hours = 12
    static let weekStart = Date(timeIntervalSince1970: 1_800_057_600)
    /// The ingest writer's transactions: one every 100 ms, the SQLite sink's batch window.
    static let ingestPeriod = Duration.milliseconds(100)

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(cacheDirectory: String, report: inout Report) async throws {
        report.section("migration: a class-week of schema 14 upgraded while a class is ingested")
        report.line("A class-week (\(days) days × \(straps) straps × \(hours) h: a heart-rate row a second, a 70-beat heartbeat series a "
            + "minute with its beats as rows, \(hours * straps) workouts a day linked to their rows) made at schema 14 by "
            + "`PreviousSchemaStore.makeClassDays` (that schema's own migrations, rows in its shape), cached, copied and dropped from "
            + "the page cache. Measured: `HealthStore.open` (the synchronous upgrade to schema \(StoreSchema.version)), then the "
            + "background migration to its end (`migrateBatch` with the gateway's batches, a yield between them) while a writer "
            + "ingests a class of \(straps) in real time (a write every 100 ms, the heartbeat series every minute); then the writer "
            + "alone as long (30 to 120 s): the baseline. Peak RSS: VmHWM of this process, reset before opening.")
        report.line("")
        try FileManager.default.createDirectory(atPath: cacheDirectory, withIntermediateDirectories: true)
        let cached = (cacheDirectory as NSString).appendingPathComponent("class-week-v14.sqlite")
        let expectedSamples = days * hours * 3600 * straps
        let made = try classWeek(at: cached, samples: expectedSamples)
        let environment = try BenchmarkEnvironment(name: "migration")
        defer { environment.removeAll() }
        let path = environment.path("class-week.sqlite")
        try FileManager.default.copyItem(atPath: cached, toPath: path)
        try flushAndDrop(path)
        let bytesBefore = try ClassDayBenchmark.fileSize(path)
        let totals = (
            series: try storeCount(path, "SELECT count(*) FROM heartbeat_series"),
            beats: try storeCount(path, "SELECT count(*) FROM heartbeats"),
            links: try storeCount(path, "SELECT count(*) FROM workout_samples"),
            samples: try storeCount(path, "SELECT count(*) FROM samples"))
        report.load("heart-rate rows in the class-week", asked: Double(expectedSamples), got: Double(totals.samples), share: 1)
        try flushAndDrop(path)

        // Opening: the synchronous part of the upgrade.
        try resetPeakResident()
        let residentBefore = Harness.residentKiB(pid: getpid()) ?? 0
        var started = ContinuousClock.now
        let store = try await HealthStore.open(path: path)
        let openSeconds = (ContinuousClock.now - started).benchmarkSeconds

        // The background migration beside the ingest writer.
        let writer = IngestWriter(store: store, start: weekStart.addingTimeInterval(Double(days) * 86_400))
        let ingest = Task { try await writer.run() }
        started = ContinuousClock.now
        var batches: [Double] = []
        var steps = try await store.migrationSteps()
        while steps.contains(where: { $0.finished == nil }) {
            let batchStart = ContinuousClock.now
            steps = try await store.migrateBatch()
            batches.append((ContinuousClock.now - batchStart).benchmarkSeconds)
            // As StoreMaintenance: other writes (ingest) queue on the writer between two batches.
            await Task.yield()
        }
        let migrationSeconds = (ContinuousClock.now - started).benchmarkSeconds
        let peakKiB = peakResidentKiB() ?? 0
        let duringMigration = writer.takeWriteTimes()
        // The writer alone, the baseline.
        try await Task.sleep(for: .seconds(min(120, max(30, migrationSeconds))))
        let alone = writer.takeWriteTimes()
        writer.stop()
        try await ingest.value
        let written = writer.readingsWritten

        // What the migration left, and what the workouts find now.
        var fewest = Int.max
        var ownStrapOnly = 0
        for workout in try await store.workouts(from: weekStart, to: weekStart.addingTimeInterval(1)) {
            guard let stored = try await store.workout(id: workout.id) else { continue }
            fewest = min(fewest, stored.samples.count + stored.heartbeatSeries.count)
            let devices = Set(stored.samples.map { $0.device?.localIdentifier } + stored.heartbeatSeries.map { $0.device?.localIdentifier })
            if devices.count == 1 { ownStrapOnly += 1 }
        }
        let ingested = try await store.statistics(
            of: .heartRate, from: writer.start, to: writer.start.addingTimeInterval(86_400)).sampleCount
        try await store.checkpointLog()
        await store.close()
        let bytesAfter = try ClassDayBenchmark.fileSize(path)
        let usedAfter = try ClassDayBenchmark.bytesInUse(path)
        let remaining = try storeCount(path, "SELECT count(*) FROM sqlite_schema WHERE name IN ('heartbeats', 'workout_samples')")
        let withoutBlob = try storeCount(path, "SELECT count(*) FROM heartbeat_series WHERE beats IS NULL")

        func ms(_ seconds: Double?) -> String { seconds.map { Harness.format($0 * 1000, decimals: 1) + " ms" } ?? "–" }
        let longestDuring = duringMigration.max() ?? 0
        let longestAlone = alone.max() ?? 0
        report.table(
            ["figure", "value"],
            [["opening with the current code (synchronous upgrade to schema \(StoreSchema.version))", String(format: "%.1f s", openSeconds)],
             ["background migration to its end, ingest going on",
              String(format: "%.1f s, ", migrationSeconds) + "\(Harness.format(Double(batches.count))) batches (\(Harness.format(Double(totals.series))) "
                + "series' \(Harness.format(Double(totals.beats))) beats moved, \(Harness.format(Double(totals.links))) links deleted)"],
             ["peak RSS of the process, opening to the migration's end (VmHWM)",
              "\(MemoryBenchmark.mib(peakKiB)) (\(MemoryBenchmark.mib(residentBefore)) before opening)"],
             ["migration batch, median and longest", "\(ms(batches.quantile(0.5))), \(ms(batches.max()))"],
             ["ingest write while migrating (its wait for a batch included): median, p99, longest",
              "\(ms(duringMigration.quantile(0.5))), \(ms(duringMigration.quantile(0.99))), **\(ms(longestDuring))** (\(Harness.format(Double(duringMigration.count))) writes)"],
             ["ingest write alone, after the migration (baseline): median, p99, longest",
              "\(ms(alone.quantile(0.5))), \(ms(alone.quantile(0.99))), **\(ms(longestAlone))** (\(Harness.format(Double(alone.count))) writes)"],
             ["longest ingest write while migrating against the longest alone",
              longestAlone > 0 ? String(format: "%.2f×", longestDuring / longestAlone) : "–"],
             ["the file: before, after (in use)",
              "\(MemoryBenchmark.mib(bytesBefore / 1024)), \(MemoryBenchmark.mib(bytesAfter / 1024)) (\(MemoryBenchmark.mib(usedAfter / 1024)))"]])
        report.load("heartbeat series, beats and links the migration found", asked: Double(made.heartbeatSeries + made.beats + made.workoutLinks),
                    got: Double(totals.series + totals.beats + totals.links), share: 1)
        let moved = steps.first { $0.name == "heartbeats" }
        let unlinked = steps.first { $0.name == "workout_samples" }
        report.load("heartbeat series moved into blobs", asked: Double(totals.series), got: Double((moved?.done ?? 0) - withoutBlob), share: 1)
        report.load("links deleted", asked: Double(totals.links), got: Double(unlinked?.done ?? 0), share: 1)
        report.load("old tables dropped (heartbeats, workout_samples)", asked: 2, got: Double(2 - remaining), share: 1)
        report.load("heart rates and series found by the first class's workout that finds fewest", asked: 3600 + 60,
                    got: Double(fewest == .max ? 0 : fewest), share: 1)
        report.load("the first class's workouts finding only their own strap's records", asked: Double(straps), got: Double(ownStrapOnly), share: 1)
        report.load("ingest writes made while migrating, per second", asked: 1 / ingestPeriod.benchmarkSeconds,
                    got: Double(duringMigration.count) / migrationSeconds)
        report.load("heart rates the ingest writer wrote, stored", asked: Double(written), got: Double(ingested), share: 1)
        report.line("Budget: none set (issue 57 asks for the migration's time, its peak RSS and the longest writer pause); the longest "
            + "ingest write while migrating was \(ms(longestDuring)) against \(ms(longestAlone)) alone, the longest batch \(ms(batches.max())).")
    }

    /// The cached class-week at `path`, made when it is missing, not at schema 14 or without
    /// `samples` heart-rate rows; returns what it holds.
    static func classWeek(at path: String, samples: Int) throws -> PreviousSchemaStore.Contents {
        let beatsPerSeries = 70
        let contents = PreviousSchemaStore.Contents(
            heartbeatSeries: days * hours * 60 * straps, workoutLinks: days * hours * straps * (3600 + 60), samples: samples,
            beats: days * hours * 60 * straps * beatsPerSeries, workouts: days * hours * straps)
        if FileManager.default.fileExists(atPath: path),
            (try? storeCount(path, "PRAGMA user_version")) == PreviousSchemaStore.version,
            (try? storeCount(path, "SELECT count(*) FROM samples")) == samples
        {
            return contents
        }
        let partial = path + ".partial"
        for file in [path, partial] {
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: file + suffix) {
                try FileManager.default.removeItem(atPath: file + suffix)
            }
        }
        let made = try PreviousSchemaStore.makeClassDays(
            path: partial, days: days, straps: straps, hours: hours, beatsPerSeries: beatsPerSeries, start: weekStart)
        guard made == contents else { throw Failure(description: "the class-week made holds \(made), not \(contents)") }
        try FileManager.default.moveItem(atPath: partial, toPath: path)
        return made
    }

    /// Writes a file's dirty pages to the disk, then drops its pages from the page cache.
    static func flushAndDrop(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Failure(description: "fsync \(path): \(String(cString: strerror(errno)))") }
        try MemoryBenchmark.dropCachedPages(of: path)
    }

    /// Resets this process's peak resident set size (VmHWM) to its current one (proc(5),
    /// /proc/PID/clear_refs: 5).
    static func resetPeakResident() throws {
        do {
            try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
        } catch {
            throw Failure(description: "cannot reset the peak RSS through /proc/self/clear_refs: \(error)")
        }
    }

    /// This process's peak resident set size in KiB since it was last reset (VmHWM).
    static func peakResidentKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    /// A class of 30 ingested in real time as the SQLite sink commits it: every 100 ms one
    /// transaction with that tenth of a second's heart rates (each strap one a second, a tenth
    /// of the straps in each), every minute the minute's 30 heartbeat series. A write that comes
    /// late (the writer held) is followed at once by the next, as the sink's queue fills meanwhile.
    final class IngestWriter: Sendable {
        let store: HealthStore
        /// The date of the first reading, after the class-week.
        let start: Date
        private let state = Mutex<(writeTimes: [Double], readings: Int, stopped: Bool)>(([], 0, false))

        init(store: HealthStore, start: Date) {
            self.store = store
            self.start = start
        }

        /// The heart rates written so far.
        var readingsWritten: Int { state.withLock { $0.readings } }

        /// The seconds each write took since the last call, and forgets them.
        func takeWriteTimes() -> [Double] {
            state.withLock { state in
                defer { state.writeTimes = [] }
                return state.writeTimes
            }
        }

        func stop() { state.withLock { $0.stopped = true } }

        func run() async throws {
            let ids = SampleIDGenerator()
            let devices = (0..<MigrationBenchmark.straps).map { index in
                Device(name: "Polar H10 \(String(format: "%08X", 0x1A2B_0000 + index))", manufacturer: "Polar Electro Oy",
                       model: "H10", localIdentifier: String(format: "A0:9E:1A:00:00:%02X", index))
            }
            let straps = devices.count
            let perTick = straps / 10
            let clock = ContinuousClock()
            var deadline = clock.now
            var tick = 0
            while !state.withLock({ $0.stopped }) {
                let second = tick / 10
                let date = start.addingTimeInterval(Double(second))
                var records: [HealthRecord] = []
                for strap in (tick % 10) * perTick..<(tick % 10 + 1) * perTick {
                    records.append(.quantity(try QuantitySample(
                        id: ids.next(), type: .heartRate, quantity: Quantity(Double(90 + (second + strap) % 80), .countPerMinute),
                        start: date, end: date, device: devices[strap])))
                }
                if tick % 600 == 599 {
                    let seriesStart = date.addingTimeInterval(-59)
                    for (strap, device) in devices.enumerated() {
                        let beats = StrapBeats.series(strap: strap, count: 70)
                        records.append(.heartbeatSeries(try HeartbeatSeriesSample(
                            id: ids.next(), start: seriesStart, end: seriesStart.addingTimeInterval(59.5), beats: beats, device: device)))
                    }
                }
                let began = clock.now
                try await store.write(records)
                let took = (clock.now - began).benchmarkSeconds
                state.withLock {
                    $0.writeTimes.append(took)
                    $0.readings += perTick
                }
                tick += 1
                deadline += MigrationBenchmark.ingestPeriod
                if deadline > clock.now { try await clock.sleep(until: deadline) }
            }
        }
    }
}
