import CSQLite
import Foundation
import HealthModel
import SQLite
import SQLiteStore
import SampleBus

/// Ingest into SQLite: records published on the real ``SampleBus`` → the sink's bounded queue →
/// ``SQLiteSink`` → committed, against a plain C-API insert loop writing the same rows.
///
/// Both sides, per run, in a fresh file in a temporary directory: open, WAL and the same pragmas,
/// the same schema (``StoreSchema/migrations``), the same insert statement
/// (``StoreSchema/insertSample``), one transaction per `batchSize` rows, then close (which
/// checkpoints the WAL). All of that is inside the timed region on both sides. The schema is
/// created by the same migration code on both sides (``SQLite/SQLiteConnection/migrate(_:)-([SQLiteMigration])``):
/// schema version 2 has a step written in Swift, which a plain C loop cannot run.
///
/// Outside the timed region: making the samples (UUIDv7 ids, dates, the device) and, for the
/// baseline, the plain values each row binds. Inside, for the measured path: publishing
/// pre-built chunks of 100 records on the bus (concurrently with the sink, as sources do), the
/// queue, the sink's batching and the writer's conversions (dates to microseconds, the device
/// row lookup, the bound-value memo).
enum IngestBenchmark {
    struct Row {
        var high: UInt64
        var low: UInt64
        var value: Double
        var start: Int64
        var end: Int64
    }

    static func run(report: inout Report) async throws {
        report.section("Ingest into SQLite")
        report.line("Measured: `SamplePublisher.publish` (chunks of 100 pre-built heart-rate samples, one device, no metadata) "
            + "→ SampleBus → sink queue (capacity 10 000, block) → SQLiteSink (batchSize = the batch, window 100 ms) → committed, "
            + "file opened, migrated and closed inside the timed region. Baseline: sqlite3 C API loop, same file setup, schema, "
            + "statement, pragmas (WAL, synchronous=NORMAL, foreign_keys=ON) and batch size, binding pre-computed values. "
            + "Runs alternate baseline/measured; best of 5 each by wall time.")
        report.line("")
        let environment = try BenchmarkEnvironment(name: "ingest")
        defer { environment.removeAll() }
        let ids = SampleIDGenerator()
        let start = Date()
        func samples(_ count: Int) throws -> [HealthRecord] {
            try BenchmarkSamples.heartRate(count: count, ids: ids, start: start)
        }

        var rows: [[String]] = []
        var ratioAt1000 = 0.0
        for (batchSize, count) in [(1, 4_000), (100, 100_000), (1000, 200_000)] {
            let records = try samples(count)
            let plain = records.map { record -> Row in
                guard case .quantity(let sample) = record else { return Row(high: 0, low: 0, value: 0, start: 0, end: 0) }
                return Row(high: sample.id.high, low: sample.id.low, value: sample.quantity.value,
                           start: SQLiteSampleWriter.microseconds(sample.startDate),
                           end: SQLiteSampleWriter.microseconds(sample.endDate))
            }
            let chunks = BenchmarkSamples.chunks(records)
            var bestBaseline = Double.infinity
            var bestMeasured = Double.infinity
            var bestMeasuredCPU = Double.infinity
            var bestBaselineCPU = Double.infinity
            var bestPrefilled = Double.infinity
            for repetition in 0..<5 {
                let basePath = environment.path("baseline-\(batchSize)-\(repetition).sqlite")
                let cpu0 = Harness.cpuSeconds()
                let t0 = ContinuousClock.now
                try baseline(path: basePath, rows: plain, device: BenchmarkSamples.device, batchSize: batchSize)
                bestBaseline = min(bestBaseline, (ContinuousClock.now - t0).benchmarkSeconds)
                bestBaselineCPU = min(bestBaselineCPU, Harness.cpuSeconds() - cpu0)

                let path = environment.path("sink-\(batchSize)-\(repetition).sqlite")
                let cpu1 = Harness.cpuSeconds()
                let t1 = ContinuousClock.now
                try await measured(path: path, chunks: chunks, batchSize: batchSize, environment: environment)
                bestMeasured = min(bestMeasured, (ContinuousClock.now - t1).benchmarkSeconds)
                bestMeasuredCPU = min(bestMeasuredCPU, Harness.cpuSeconds() - cpu1)
                try check(path: path, expected: count)
                try check(path: basePath, expected: count)
                let prePath = environment.path("prefilled-\(batchSize)-\(repetition).sqlite")
                if batchSize > 1 {
                    let seconds = try await measured(
                        path: prePath, chunks: chunks, batchSize: batchSize, environment: environment, prefilled: true)
                    bestPrefilled = min(bestPrefilled, seconds)
                    try check(path: prePath, expected: count)
                }
                for file in [path, basePath, prePath] {
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
                }
            }
            let baseRate = Double(count) / bestBaseline
            let rate = Double(count) / bestMeasured
            if batchSize == 1000 { ratioAt1000 = rate / baseRate }
            rows.append([
                "\(batchSize)", Harness.format(Double(count)), Harness.format(rate) + " rows/s",
                Harness.format(baseRate) + " rows/s", String(format: "**%.2f×**", rate / baseRate),
                String(format: "%.1f µs / %.1f µs", bestMeasuredCPU / Double(count) * 1e6, bestBaselineCPU / Double(count) * 1e6),
                bestPrefilled.isFinite
                    ? Harness.format(Double(count) / bestPrefilled) + String(format: " rows/s (%.2f×)", Double(count) / bestPrefilled / baseRate)
                    : "–",
            ])
        }
        report.table(["batch", "rows", "measured (wall)", "baseline C loop (wall)", "ratio", "CPU per row measured / baseline", "sink alone (queue pre-filled)"], rows)
        let problems = environment.logSink.summary
        if problems.warnings + problems.errors > 0 {
            report.line("Warnings/errors logged by the sink: \(problems.warnings)/\(problems.errors), last: \(problems.last ?? "")")
        }
        report.line("Budget: ≥ 0.8× the baseline at batches of 1000: " + String(format: "%.2f×, ", ratioAt1000)
            + Harness.verdict(ratioAt1000 >= 0.8) + ". (CPU per row includes the publishing task, which runs in parallel on the second core.)")
    }

    /// One measured run at batches of 1000 and nothing else, for a profiler
    /// (`valgrind --tool=callgrind healthgate-benchmarks ingest-profile`).
    static func profile(rows: Int) async throws {
        let environment = try BenchmarkEnvironment(name: "ingest-profile")
        defer { environment.removeAll() }
        let records = try BenchmarkSamples.heartRate(count: rows, ids: SampleIDGenerator())
        let chunks = BenchmarkSamples.chunks(records)
        try await measured(path: environment.path("profile.sqlite"), chunks: chunks, batchSize: 1000, environment: environment, prefilled: true)
    }

    /// The real path: publish on a bus, the sink commits. With `prefilled`, everything is
    /// published (and the bus finished) before the clock starts, so only the sink is timed.
    /// Returns the seconds timed.
    @discardableResult
    static func measured(
        path: String, chunks: [[HealthRecord]], batchSize: Int, environment: BenchmarkEnvironment, prefilled: Bool = false
    ) async throws -> Double {
        let sink = try SQLiteSink(
            configuration: .init(path: path, batchSize: batchSize, batchWindowSeconds: 0.1),
            environment: environment.plugin("sqlite"))
        let board = StatusBoard()
        let status = board.register(name: "sqlite", kind: SQLiteSink.kind, role: .sink)
        let capacity = prefilled ? chunks.reduce(0) { $0 + $1.count } : 10_000
        let bus = SampleBus(sinks: [("sqlite", QueueConfiguration(capacity: capacity, policy: .block), { sink.accepts($0) }, status)])
        let inbox = bus.subscriptions[0].inbox
        // A status reporter, as a real source has: publishing also counts records and dates.
        let publisher = SamplePublisher(bus: bus, status: board.register(name: "source", kind: "bench", role: .source))
        let context = SinkContext(logger: environment.logger, clock: environment.clock, status: status)
        if prefilled {
            for chunk in chunks { await publisher.publish(chunk) }
            bus.finish()
            let start = ContinuousClock.now
            try await sink.run(inbox: inbox, context: context)
            return (ContinuousClock.now - start).benchmarkSeconds
        }
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await sink.run(inbox: inbox, context: context) }
            group.addTask {
                for chunk in chunks { await publisher.publish(chunk) }
                bus.finish()
            }
            try await group.waitForAll()
        }
        return (ContinuousClock.now - start).benchmarkSeconds
    }

    struct SQLiteFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// The baseline: the sqlite3 C API, nothing else, once the schema exists (created by the
    /// writer's migration code on a second, short-lived connection; see the type's comment).
    static func baseline(path: String, rows: [Row], device: Device, batchSize: Int) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
            let db
        else { throw SQLiteFailure(description: "open \(path)") }
        defer { sqlite3_close(db) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
                throw SQLiteFailure(description: "\(sql.prefix(40)): \(String(cString: sqlite3_errmsg(db)))")
            }
        }
        sqlite3_busy_timeout(db, 5000)
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=NORMAL")
        try exec("PRAGMA foreign_keys=ON")
        // Opened after `db`, so that closing it is not the last close and does not checkpoint:
        // the migration's pages stay in the WAL, as when one connection does everything.
        try SQLiteConnection(path: path).migrate(StoreSchema.migrations)
        // The device row, as the writer makes it once per device.
        try exec("BEGIN IMMEDIATE")
        try exec("INSERT INTO devices (name, manufacturer, model, firmware_version, local_identifier) VALUES ('\(device.name ?? "")', '\(device.manufacturer ?? "")', '\(device.model ?? "")', '\(device.firmwareVersion ?? "")', '\(device.localIdentifier ?? "")')")
        try exec("COMMIT")
        let deviceID = sqlite3_last_insert_rowid(db)
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, StoreSchema.insertSample, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw SQLiteFailure(description: "prepare: \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        var index = 0
        while index < rows.count {
            try exec("BEGIN IMMEDIATE")
            for row in rows[index..<min(index + batchSize, rows.count)] {
                var key = (row.high.bigEndian, row.low.bigEndian)
                withUnsafeBytes(of: &key) { _ = shim_bind_blob_transient(statement, 1, $0.baseAddress, 16) }
                _ = shim_bind_text_transient(statement, 2, "heartRate", 9)
                sqlite3_bind_double(statement, 3, row.value)
                _ = shim_bind_text_transient(statement, 4, "count/min", 9)
                sqlite3_bind_double(statement, 5, row.value)
                sqlite3_bind_int64(statement, 6, row.start)
                sqlite3_bind_int64(statement, 7, row.end)
                sqlite3_bind_int64(statement, 8, deviceID)
                sqlite3_bind_null(statement, 9)
                sqlite3_bind_null(statement, 10)
                sqlite3_bind_null(statement, 11)  // no metadata, as the measured samples
                guard sqlite3_step(statement) == SQLITE_DONE else {
                    throw SQLiteFailure(description: "insert: \(String(cString: sqlite3_errmsg(db)))")
                }
                sqlite3_reset(statement)
            }
            try exec("COMMIT")
            index += batchSize
        }
    }

    /// Both files must hold every row: a benchmark that loses rows measures nothing.
    static func check(path: String, expected: Int) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
            throw SQLiteFailure(description: "open \(path)")
        }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT count(*) FROM samples", -1, &statement, nil) == SQLITE_OK, let statement else {
            throw SQLiteFailure(description: "count: \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, sqlite3_column_int64(statement, 0) == Int64(expected) else {
            throw SQLiteFailure(description: "\(path): expected \(expected) rows, found \(sqlite3_column_int64(statement, 0))")
        }
    }
}
