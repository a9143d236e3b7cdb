import Foundation
import HealthModel
import HealthStore

/// A class-day in the store (issue 48, `store.retentionDays`): 30 chest straps × 12 hours of heart
/// rate at 1 Hz (one sample a second each), each strap's beats as one heartbeat series a minute
/// (70 beats), and twelve one-hour classes of 30 workouts, each workout linked to its strap's
/// samples and series of that hour, as a live workout links them. Written through
/// ``HealthStore/write(_:checkpoints:)`` in batches of 1000 records (the SQLite sink's batch),
/// then the WAL checkpointed: the figure is the database file's bytes.
///
/// Then the retention pass (``HealthStore/prune(endingBefore:batchSize:)``) on the same day, once
/// with its workouts (they keep what they reference: nothing goes) and once on a copy of the day
/// written without workouts (everything goes), timing each batch: the longest batch is how long
/// pruning holds the writer, printed as a ratio against the same run's longest write of a
/// 1000-sample batch (the baseline), and the medians likewise.
///
/// The load is checked: the store must hold every sample, series and workout written.
enum ClassDayBenchmark {
    static let straps = 30
    static let hours = 12

    static func run(report: inout Report) async throws {
        report.section("A class-day in the store (store.retentionDays)")
        report.line("Workload: \(straps) straps × \(hours) h: heart rate at 1 Hz, one 70-beat heartbeat series a minute per strap, "
            + "\(hours) one-hour classes of \(straps) workouts linked to their samples and series. Written in batches of 1000, "
            + "WAL checkpointed, file size measured. Then the retention pass (batches of \(HealthStore.retentionBatchSize) "
            + "candidates), its median and longest batch against the median and longest 1000-sample write of the same run (baseline).")
        report.line("")
        let environment = try BenchmarkEnvironment(name: "class-day")
        defer { environment.removeAll() }
        let dayStart = Date(timeIntervalSince1970: 1_800_057_600)
        let samplesPerStrap = hours * 3600
        let seriesPerStrap = hours * 60

        var rows: [[String]] = []
        var longestRatio = 0.0
        for withWorkouts in [true, false] {
            let path = environment.path(withWorkouts ? "class-day.sqlite" : "samples-only.sqlite")
            let store = try HealthStore(path: path)
            let ids = SampleIDGenerator()
            var writeTimes: [Double] = []
            var pending: [HealthRecord] = []
            func flush() async throws {
                guard !pending.isEmpty else { return }
                let started = ContinuousClock.now
                try await store.write(pending)
                let elapsed = ContinuousClock.now - started
                if pending.count == 1000 { writeTimes.append(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)) }
                pending.removeAll(keepingCapacity: true)
            }
            let devices = (0..<straps).map { index in
                Device(name: "Polar H10 \(String(format: "%08X", 0x1A2B_0000 + index))", manufacturer: "Polar Electro Oy",
                       model: "H10", localIdentifier: String(format: "A0:9E:1A:00:00:%02X", index))
            }
            for hour in 0..<hours {
                var linked: [[SampleID]] = Array(repeating: [], count: straps)
                for second in 0..<3600 {
                    let date = dayStart.addingTimeInterval(Double(hour * 3600 + second))
                    for strap in 0..<straps {
                        let sample = try QuantitySample(
                            id: ids.next(), type: .heartRate, quantity: Quantity(Double(90 + (second + strap) % 80), .countPerMinute),
                            start: date, end: date, device: devices[strap])
                        linked[strap].append(sample.id)
                        pending.append(.quantity(sample))
                        if pending.count == 1000 { try await flush() }
                    }
                    if second % 60 == 59 {
                        for strap in 0..<straps {
                            let start = date.addingTimeInterval(-59)
                            let beats = (1...70).map { Heartbeat(timeSinceSeriesStart: Double($0) * 0.85, precededByGap: false) }
                            let series = try HeartbeatSeriesSample(
                                id: ids.next(), start: start, end: start.addingTimeInterval(59.5), beats: beats, device: devices[strap])
                            linked[strap].append(series.id)
                            pending.append(.heartbeatSeries(series))
                            if pending.count == 1000 { try await flush() }
                        }
                    }
                }
                if withWorkouts {
                    let start = dayStart.addingTimeInterval(Double(hour * 3600))
                    for strap in 0..<straps {
                        pending.append(.workout(Workout(
                            id: ids.next(), activityType: .highIntensityIntervalTraining, startDate: start,
                            endDate: start.addingTimeInterval(3600), duration: 3600,
                            statistics: [QuantityStatistics(
                                type: .heartRate, startDate: start, endDate: start.addingTimeInterval(3600),
                                sampleCount: 3600, average: 120, minimum: 90, maximum: 169)])))
                    }
                }
            }
            try await flush()
            try await store.checkpointLog()
            let bytes = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
            let stored = try storeCount(path, "SELECT count(*) FROM samples")
            report.load("heart-rate samples stored (\(withWorkouts ? "with" : "without") workouts)",
                        asked: Double(straps * samplesPerStrap), got: Double(stored), share: 1)
            let seriesStored = try storeCount(path, "SELECT count(*) FROM heartbeat_series")
            report.load("heartbeat series stored", asked: Double(straps * seriesPerStrap), got: Double(seriesStored), share: 1)
            if withWorkouts {
                let workouts = try storeCount(path, "SELECT count(*) FROM workouts")
                report.load("workouts stored", asked: Double(straps * hours), got: Double(workouts), share: 1)
            }

            // The retention pass, batch by batch, timed.
            var progress = RetentionProgress.start
            var batchTimes: [Double] = []
            let cutoff = dayStart.addingTimeInterval(Double(hours * 3600 + 60))
            while !progress.isFinished {
                let started = ContinuousClock.now
                progress = try await store.pruneBatch(endingBefore: cutoff, after: progress)
                let elapsed = ContinuousClock.now - started
                batchTimes.append(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds))
            }
            await store.close()
            writeTimes.sort()
            let medianWrite = writeTimes.isEmpty ? 0 : writeTimes[writeTimes.count / 2]
            let longest = batchTimes.max() ?? 0
            batchTimes.sort()
            let medianBatch = batchTimes.isEmpty ? 0 : batchTimes[batchTimes.count / 2]
            let longestWrite = writeTimes.last ?? 0
            // Both ends of the two distributions: a WAL checkpoint (every 1000 pages, at a
            // commit) lands on whichever transaction crosses it, a write's or a prune batch's.
            let ratio = longestWrite > 0 ? longest / longestWrite : 0
            let medianRatio = medianWrite > 0 ? medianBatch / medianWrite : 0
            longestRatio = max(longestRatio, ratio)
            let records = straps * (samplesPerStrap + seriesPerStrap)
            rows.append([
                withWorkouts ? "class-day with \(straps * hours) workouts" : "the same day, no workouts",
                "\(Harness.format(Double(bytes) / 1_048_576, decimals: 1)) MiB",
                "\(Harness.format(Double(bytes) / Double(straps * samplesPerStrap), decimals: 1)) B",
                "\(Harness.format(Double(bytes) * 365 / 1_073_741_824, decimals: 1)) GiB",
                "\(progress.samplesPruned) samples, \(progress.seriesPruned) series of \(records) records",
                "\(progress.batches)",
                "\(Harness.format(medianBatch * 1000, decimals: 1)) ms",
                "\(Harness.format(longest * 1000, decimals: 1)) ms",
                "\(Harness.format(medianWrite * 1000, decimals: 1)) ms, \(Harness.format(longestWrite * 1000, decimals: 1)) ms",
                "\(Harness.format(medianRatio, decimals: 2)), \(Harness.format(ratio, decimals: 2))",
            ])
        }
        report.table(
            ["Store", "File", "Per heart-rate sample (all bytes)", "× 365 days", "Pruned", "Batches",
             "Median prune batch", "Longest prune batch", "1000-sample write, median and longest (baseline)", "Ratio, median and longest"],
            rows)
        report.line("Budget: the longest prune batch holds the writer no longer than the longest 1000-sample write "
            + "of the same run (longest ratio ≤ 1): " + report.verdict(longestRatio <= 1) + ".")
    }
}
