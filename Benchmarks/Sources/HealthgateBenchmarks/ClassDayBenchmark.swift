import Foundation
import HealthModel
import HealthStore
import HealthStoreTesting

/// A class-day in the store (issues 48 and 57): 30 chest straps × 12 hours of heart rate at 1 Hz
/// (one reading a second each), each strap's beats as one heartbeat series a minute (70 beats, RR
/// intervals in 1/1024 s varying beat to beat, as straps send them: `StrapBeats`),
/// and twelve one-hour classes of 30 workouts. Written through
/// ``HealthStore/write(_:checkpoints:)`` in batches of 1000 records (the SQLite sink's batch), as
/// the gateway's store keeps them: the writer folds each strap's readings into quantity series
/// (a minute each); each workout references its time and its strap (`healthgate.devices`, as
/// the gateway writes a participant's workout), carries its heart-rate statistics, and gets its
/// curve in the transaction that stores it; no workout lists rows. The series still open at the
/// end are closed (as the gateway closes idle series), the WAL checkpointed
/// (`wal_checkpoint(TRUNCATE)`): the figure is the database file's bytes, everything included,
/// per heart-rate reading, against the budget of 16 bytes (8 GB for a class's year), the
/// information bound (a 1 Hz heart rate is about a byte a reading, an RR interval about two
/// bytes a beat) and Gorilla's 1.37 bytes per point (Facebook's Gorilla, VLDB 2015). The file's
/// pages by table (`dbstat`) say where the bytes are.
///
/// Every stored workout is read back (``HealthStore/workout(id:)``): each must find its strap's
/// hour (3 600 heart rates and 60 heartbeat series) and nothing of another strap.
///
/// Then two retention passes (``HealthStore/pruneBatch(endingBefore:after:batchSize:keepWorkoutRecords:)``)
/// over the whole day, timing each batch: first with `store.keepWorkoutSamples`
/// (`keepWorkoutRecords`: every reading lies in a class, so nothing goes), then as configured by
/// default (every raw series goes; the workouts keep their statistics and curves), after which
/// the bytes still in use (the file less its free pages) are what a class-day costs once pruned.
/// Each pass's longest batch is how long pruning holds the writer, printed as a ratio against the
/// same run's longest write of a 1000-record batch (the baseline), and the medians likewise.
///
/// The load is checked: the store must hold every reading, series and workout written, a curve
/// per workout, and each workout must find its own strap's hour.
enum ClassDayBenchmark {
    static let straps = 30
    static let hours = 12
    static let beatsPerSeries = 70
    /// The budget: bytes per heart-rate reading, everything included (issue 57: 8 GB a class's year).
    static let budgetBytesPerReading = 16.0
    /// Gorilla's bytes per point (timestamp and value) on Facebook's monitoring data (VLDB 2015, §4.1).
    static let gorillaBytesPerPoint = 1.37

    static func run(report: inout Report) async throws {
        report.section("A class-day in the store: bytes per heart rate, and the retention pass")
        report.line("Workload: \(straps) straps × \(hours) h: heart rate at 1 Hz (folded by the store's writer into quantity series), "
            + "one \(beatsPerSeries)-beat heartbeat series a minute per strap (RR intervals in 1/1024 s, `StrapBeats`), \(hours) one-hour classes of \(straps) workouts, each "
            + "naming its strap in `healthgate.devices` with its heart-rate statistics (curves written with it). Written in batches "
            + "of 1000, open series closed, WAL checkpointed (TRUNCATE), file size measured. Then two retention passes (batches of "
            + "\(HealthStore.retentionBatchSize) candidates), with `keepWorkoutSamples` and without, each one's median and longest "
            + "batch against the median and longest 1000-record write of the same run (baseline).")
        report.line("")
        let environment = try BenchmarkEnvironment(name: "class-day")
        defer { environment.removeAll() }
        let path = environment.path("class-day.sqlite")
        let dayStart = Date(timeIntervalSince1970: 1_800_057_600)
        let readings = straps * hours * 3600
        let seriesCount = straps * hours * 60
        let beats = seriesCount * beatsPerSeries

        let store = try HealthStore(path: path)
        let written = try await writeDay(store, from: dayStart)
        try await store.closeSeries()
        try await store.checkpointLog()
        let bytes = try fileSize(path)

        report.load("heart rates stored", asked: Double(readings), got: Double(try storeCount(path, heartRateSampleCount)), share: 1)
        report.load("heartbeat series stored", asked: Double(seriesCount), got: Double(try storeCount(path, "SELECT count(*) FROM heartbeat_series")), share: 1)
        report.load("workouts stored", asked: Double(straps * hours), got: Double(try storeCount(path, "SELECT count(*) FROM workouts")), share: 1)
        report.load("workout curves stored", asked: Double(straps * hours),
                    got: Double(try storeCount(path, "SELECT count(DISTINCT workout_uuid) FROM workout_curves")), share: 1)
        let found = try await workoutsFound(store)
        report.load("heart rates and heartbeat series found by the workout that finds fewest", asked: 3600 + 60, got: Double(found.fewest), share: 1)
        report.load("workouts finding only their own strap's records", asked: Double(straps * hours), got: Double(found.ownStrapOnly), share: 1)

        // Where the bytes are.
        let tables = try pagesByTable(path)
        let quantityBlob = try storeCount(path, "SELECT ifnull(sum(length(quantities)), 0) FROM quantity_series")
        let beatBlob = try storeCount(path, "SELECT ifnull(sum(length(beats)), 0) FROM heartbeat_series")
        let quantitySeries = try storeCount(path, heartRateSeriesCount)
        let perReading = Double(bytes) / Double(readings)
        let yearGB = Double(bytes) * 365 / 1e9
        // The information in the day: a byte per heart rate, two per beat; Gorilla's 1.37 bytes
        // for each of them as a point.
        let bound = Double(readings) + 2 * Double(beats)
        let gorilla = gorillaBytesPerPoint * Double(readings + beats)
        func megabytes(_ value: Double) -> String { Harness.format(value / 1e6, decimals: 2) + " MB" }
        report.table(
            ["figure", "bytes", "per heart-rate reading", "a class's year (× 365)"],
            [["the class-day's file, everything included", "\(megabytes(Double(bytes))) (\(Harness.format(Double(bytes) / 1_048_576, decimals: 1)) MiB)",
              "**\(Harness.format(perReading, decimals: 2)) B**", "\(Harness.format(yearGB, decimals: 2)) GB"],
             ["budget", megabytes(budgetBytesPerReading * Double(readings)), "≤ \(Harness.format(budgetBytesPerReading)) B",
              "≤ \(Harness.format(budgetBytesPerReading * Double(readings) * 365 / 1e9, decimals: 2)) GB"],
             ["information bound: 1 B a heart rate, 2 B a beat (\(Harness.format(Double(beats))) beats)", megabytes(bound),
              Harness.format(bound / Double(readings), decimals: 2) + " B", Harness.format(bound * 365 / 1e9, decimals: 2) + " GB"],
             ["Gorilla, \(gorillaBytesPerPoint) B a point (each heart rate and each beat)", megabytes(gorilla),
              Harness.format(gorilla / Double(readings), decimals: 2) + " B", Harness.format(gorilla * 365 / 1e9, decimals: 2) + " GB"]])
        report.line("The file against the information bound: \(Harness.format(Double(bytes) / bound, decimals: 1))×, against Gorilla: "
            + "\(Harness.format(Double(bytes) / gorilla, decimals: 1))×. The blobs alone: "
            + "\(Harness.format(Double(quantityBlob) / Double(readings), decimals: 2)) B a heart rate "
            + "(\(Harness.format(Double(quantitySeries))) quantity series), \(Harness.format(Double(beatBlob) / Double(beats), decimals: 2)) B a beat "
            + "(Gorilla \(gorillaBytesPerPoint) B a point).")
        report.line("Pages by table and index (`dbstat`), with their share of the file: " + tables.map { name, size in
            "\(name) \(megabytes(Double(size))) (\(Harness.format(100 * Double(size) / Double(bytes), decimals: 1)) %)"
        }.joined(separator: ", ") + ".")
        report.line("")

        // The retention passes, batch by batch, timed.
        let cutoff = dayStart.addingTimeInterval(Double(hours * 3600 + 60))
        var rows: [[String]] = []
        var longestRatio = 0.0
        let writeTimes = written.writeTimes.sorted()
        let medianWrite = writeTimes.isEmpty ? 0 : writeTimes[writeTimes.count / 2]
        let longestWrite = writeTimes.last ?? 0
        for keep in [true, false] {
            var progress = RetentionProgress.start
            var batchTimes: [Double] = []
            while !progress.isFinished {
                let started = ContinuousClock.now
                progress = try await store.pruneBatch(endingBefore: cutoff, after: progress, keepWorkoutRecords: keep)
                batchTimes.append((ContinuousClock.now - started).benchmarkSeconds)
            }
            let longest = batchTimes.max() ?? 0
            batchTimes.sort()
            let medianBatch = batchTimes.isEmpty ? 0 : batchTimes[batchTimes.count / 2]
            // Both ends of the two distributions: a WAL checkpoint (every 1000 pages, at a
            // commit) lands on whichever transaction crosses it, a write's or a prune batch's.
            let ratio = longestWrite > 0 ? longest / longestWrite : 0
            let medianRatio = medianWrite > 0 ? medianBatch / medianWrite : 0
            longestRatio = max(longestRatio, ratio)
            rows.append([
                keep ? "with `keepWorkoutSamples` (every reading lies in a class)" : "by default (workouts keep statistics and curves)",
                "\(Harness.format(Double(progress.quantitySeriesPruned))) quantity series, \(Harness.format(Double(progress.samplesPruned))) samples, "
                    + "\(Harness.format(Double(progress.seriesPruned))) heartbeat series",
                "\(progress.batches)",
                "\(Harness.format(medianBatch * 1000, decimals: 1)) ms",
                "\(Harness.format(longest * 1000, decimals: 1)) ms",
                "\(Harness.format(medianWrite * 1000, decimals: 1)) ms, \(Harness.format(longestWrite * 1000, decimals: 1)) ms",
                "\(Harness.format(medianRatio, decimals: 2)), \(Harness.format(ratio, decimals: 2))",
            ])
        }
        try await store.checkpointLog()
        await store.close()
        let used = try bytesInUse(path)
        report.table(
            ["retention pass", "pruned", "batches", "median batch", "longest batch",
             "1000-record write, median and longest (baseline)", "ratio, median and longest"],
            rows)
        report.line("After the default pass the file holds \(megabytes(Double(used))) in use "
            + "(\(Harness.format(Double(used) / Double(straps * hours), decimals: 0)) B a workout with its statistics and curve; "
            + "\(Harness.format(Double(used) * 365 / 1e9, decimals: 2)) GB a class's year once pruned).")
        report.line("Budget: ≤ \(Harness.format(budgetBytesPerReading)) B per heart-rate reading, everything included: "
            + "\(Harness.format(perReading, decimals: 2)) B, " + report.verdict(perReading <= budgetBytesPerReading)
            + "; the longest prune batch holds the writer no longer than the longest 1000-record write of the same run "
            + "(longest ratio ≤ 1): \(Harness.format(longestRatio, decimals: 2)), " + report.verdict(longestRatio <= 1) + ".")
    }

    /// Writes the class-day in batches of 1000 records; returns the time of each full batch's write.
    static func writeDay(_ store: HealthStore, from dayStart: Date) async throws -> (writeTimes: [Double], records: Int) {
        let ids = SampleIDGenerator()
        var writeTimes: [Double] = []
        var records = 0
        var pending: [HealthRecord] = []
        func flush() async throws {
            guard !pending.isEmpty else { return }
            let started = ContinuousClock.now
            try await store.write(pending)
            if pending.count == 1000 { writeTimes.append((ContinuousClock.now - started).benchmarkSeconds) }
            records += pending.count
            pending.removeAll(keepingCapacity: true)
        }
        func add(_ record: HealthRecord) async throws {
            pending.append(record)
            if pending.count == 1000 { try await flush() }
        }
        let devices = (0..<straps).map { index in
            Device(name: "Polar H10 \(String(format: "%08X", 0x1A2B_0000 + index))", manufacturer: "Polar Electro Oy",
                   model: "H10", localIdentifier: String(format: "A0:9E:1A:00:00:%02X", index))
        }
        for hour in 0..<hours {
            let classStart = dayStart.addingTimeInterval(Double(hour * 3600))
            var values: [[Double]] = Array(repeating: [], count: straps)
            for second in 0..<3600 {
                let date = classStart.addingTimeInterval(Double(second))
                for strap in 0..<straps {
                    let value = Double(90 + (second + strap) % 80)
                    values[strap].append(value)
                    try await add(.quantity(try QuantitySample(
                        id: ids.next(), type: .heartRate, quantity: Quantity(value, .countPerMinute),
                        start: date, end: date, device: devices[strap])))
                }
                if second % 60 == 59 {
                    for strap in 0..<straps {
                        let start = date.addingTimeInterval(-59)
                        let beats = StrapBeats.series(strap: strap, count: beatsPerSeries)
                        try await add(.heartbeatSeries(try HeartbeatSeriesSample(
                            id: ids.next(), start: start, end: start.addingTimeInterval(59.5), beats: beats, device: devices[strap])))
                    }
                }
            }
            for strap in 0..<straps {
                try await add(.workout(workout(
                    id: ids.next(), activity: ids.next(), start: classStart, values: values[strap],
                    strap: devices[strap], participant: "P\(strap + 1)")))
            }
        }
        try await flush()
        return (writeTimes, records)
    }

    /// A participant's workout of the hour from `start` as the gateway stores it
    /// (`LiveWorkout.workout(profile:)`): its heart-rate statistics over the hour's `values` (one
    /// a second), one activity with the same, and its metadata (gap figures, the maximum heart
    /// rate and the seconds in each zone, its strap in `healthgate.devices`, its participant).
    static func workout(id: SampleID, activity: SampleID, start: Date, values: [Double], strap: Device, participant: String) -> Workout {
        let end = start.addingTimeInterval(Double(values.count))
        let statistics = QuantityStatistics(
            type: .heartRate, startDate: start, endDate: end, sampleCount: values.count,
            average: values.reduce(0, +) / Double(values.count), minimum: values.min(), maximum: values.max(),
            mostRecent: values.last, mostRecentDate: end.addingTimeInterval(-1))
        let maximumHeartRate = 190.0
        var metadata: Metadata = [
            "healthgate.gapThresholdSeconds": .double(5), "healthgate.gapCount": .integer(0), "healthgate.gapSeconds": .double(0),
            "healthgate.maximumHeartRate": .double(maximumHeartRate), "healthgate.participant": .string(participant),
            .workoutDevices: .string(strap.localIdentifier ?? ""),
        ]
        // Zones 1 to 5 from 50 % of the maximum heart rate, 10 % each.
        for zone in 1...5 {
            let low = maximumHeartRate * (0.4 + 0.1 * Double(zone))
            let seconds = values.filter { $0 >= low && (zone == 5 || $0 < low + maximumHeartRate * 0.1) }.count
            metadata[MetadataKey("healthgate.zone\(zone)Seconds")] = .double(Double(seconds))
        }
        return Workout(
            id: id, activityType: .highIntensityIntervalTraining, startDate: start, endDate: end, duration: Double(values.count),
            activities: [WorkoutActivity(
                id: activity, activityType: .highIntensityIntervalTraining, startDate: start, endDate: end, statistics: [statistics])],
            statistics: [statistics], metadata: metadata)
    }

    /// What the stored workouts find of themselves (``HealthStore/workout(id:)``): the fewest
    /// heart rates and heartbeat series any finds, and how many find records of one strap only.
    static func workoutsFound(_ store: HealthStore) async throws -> (fewest: Int, ownStrapOnly: Int) {
        var found = (fewest: Int.max, ownStrapOnly: 0)
        for workout in try await store.workouts() {
            guard let stored = try await store.workout(id: workout.id) else { continue }
            let heartRates = stored.samples.filter { $0.type == .heartRate }
            found.fewest = min(found.fewest, heartRates.count + stored.heartbeatSeries.count)
            let devices = Set(heartRates.map { $0.device?.localIdentifier } + stored.heartbeatSeries.map { $0.device?.localIdentifier })
            if devices.count == 1 { found.ownStrapOnly += 1 }
        }
        return found.fewest == .max ? (0, 0) : found
    }

    static func fileSize(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
    }

    /// The file's bytes less its free pages.
    static func bytesInUse(_ path: String) throws -> Int {
        let pageSize = try storeCount(path, "PRAGMA page_size")
        return try fileSize(path) - pageSize * (try storeCount(path, "PRAGMA freelist_count"))
    }

    /// The bytes of the pages of each table with its indexes (SQLite's `dbstat`), the largest first.
    static func pagesByTable(_ path: String) throws -> [(String, Int)] {
        let names = try storeText(path, """
            SELECT ifnull(m.tbl_name, s.name) || ' ' || sum(s.pgsize) FROM dbstat s LEFT JOIN sqlite_schema m ON m.name = s.name
            GROUP BY ifnull(m.tbl_name, s.name) ORDER BY sum(s.pgsize) DESC
            """)
        return names.compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let size = Int(parts[1]) else { return nil }
            return (String(parts[0]), size)
        }
    }
}
