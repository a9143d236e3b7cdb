import CSQLite
import Foundation
import HealthModel
import HealthStore
import SQLite
import SQLiteStore
import SampleBus

/// Ingest into the store: records published on the real ``SampleBus`` → the sink's bounded queue
/// → ``SQLiteSink`` → ``HealthStore/HealthStore`` (its writer) → committed, against a plain
/// C-API insert loop writing the same samples into a **plain table**: `(uuid, type, value,
/// start_us, end_us, device_id)` with one index on `(type, start_us)`, no triggers, no anchors.
/// That is what a sample costs with nothing the store adds; the ratio says what the store's
/// layout, its anchors and every Swift layer above the C API cost on top.
///
/// Both sides, per run, in a fresh file in a temporary directory: open, WAL, the store's
/// `synchronous` setting (``HealthStore/synchronous``, passed to the baseline: the two compare
/// like with like, each commit synced as the store syncs it) and their schema before the timed region (the store's schema is its migrations, run once when
/// a store is first opened); inside it, one transaction per `batchSize` rows, then close (which
/// checkpoints the WAL).
///
/// Outside the timed region: making the samples (UUIDv7 ids, dates, the device) and, for the
/// baseline, the plain values each row binds. Inside, for the measured path: publishing
/// pre-built chunks of 100 records on the bus (concurrently with the sink, as sources do), the
/// queue, the sink's batching, the writer's attribution of each reading to its person in the
/// transaction that stores it (the strap is a participant's, as in a gateway with participants:
/// issues 65 and 77) and the writer's conversions (dates to microseconds, the type, unit and device ids, the
/// bound-value memo, the anchors).
///
/// The load is checked, not assumed: each file must hold every row afterwards, and the run
/// fails otherwise.
enum IngestBenchmark {
    struct Row {
        var high: UInt64
        var low: UInt64
        var value: Double
        var start: Int64
        var end: Int64
    }

    static func run(report: inout Report) async throws {
        report.section("Ingest into the store")
        report.line("Measured: `SamplePublisher.publish` (chunks of 100 pre-built heart-rate samples, one device, no metadata) "
            + "→ SampleBus → sink queue (capacity 10 000, block) → SQLiteSink (batchSize = the batch, window 100 ms) → "
            + "HealthStore, whose writer attributes each reading to the participant who owns the strap (`healthgate.person`) in the transaction that stores it → committed, then the store closed (its WAL checkpointed). Baseline: sqlite3 C API loop into a "
            + "plain table (uuid, type, value, start_us, end_us, device_id; one index on type and start_us; no triggers), WAL, "
            + "synchronous=\(HealthStore.synchronous) as the store's writer, the same batch size, binding pre-computed values, then "
            + "closed. Opening a file and making "
            + "its schema (the store's migrations) is outside the timed region on both sides. Runs alternate "
            + "baseline/measured; best of 5 each by wall time.")
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
        var unattributedRow = ""
        for (batchSize, count) in [(1, 4_000), (100, 100_000), (1000, 200_000)] {
            let records = try samples(count)
            let plain = records.map { record -> Row in
                guard case .quantity(let sample) = record else { return Row(high: 0, low: 0, value: 0, start: 0, end: 0) }
                return Row(high: sample.id.high, low: sample.id.low, value: sample.quantity.value,
                           start: StoreTime.microseconds(sample.startDate), end: StoreTime.microseconds(sample.endDate))
            }
            let chunks = BenchmarkSamples.chunks(records)
            var bestBaseline = Double.infinity
            var bestMeasured = Double.infinity
            var bestMeasuredCPU = Double.infinity
            var bestBaselineCPU = Double.infinity
            var bestPrefilled = Double.infinity
            var bestUnattributed = Double.infinity
            for repetition in 0..<5 {
                let basePath = environment.path("baseline-\(batchSize)-\(repetition).sqlite")
                let base = try baseline(
                    path: basePath, rows: plain, device: BenchmarkSamples.device, batchSize: batchSize,
                    synchronous: HealthStore.synchronous)
                bestBaseline = min(bestBaseline, base.wall)
                bestBaselineCPU = min(bestBaselineCPU, base.cpu)

                let path = environment.path("sink-\(batchSize)-\(repetition).sqlite")
                let sink = try await measured(path: path, chunks: chunks, batchSize: batchSize, environment: environment)
                bestMeasured = min(bestMeasured, sink.wall)
                bestMeasuredCPU = min(bestMeasuredCPU, sink.cpu)
                try check(path: path, expected: count, counting: storedReadingCount)
                try check(path: path, expected: count, counting: attributedReadingCount)
                try check(path: basePath, expected: count)
                // What attribution costs: the same path without it (no participants), at batches of 1000.
                let plainPath = environment.path("unattributed-\(batchSize)-\(repetition).sqlite")
                if batchSize == 1000 {
                    let unattributed = try await measured(
                        path: plainPath, chunks: chunks, batchSize: batchSize, environment: environment, attributed: false)
                    bestUnattributed = min(bestUnattributed, unattributed.wall)
                    try check(path: plainPath, expected: count, counting: storedReadingCount)
                    try check(path: plainPath, expected: 0, counting: attributedReadingCount)
                }
                let prePath = environment.path("prefilled-\(batchSize)-\(repetition).sqlite")
                if batchSize > 1 {
                    let alone = try await measured(
                        path: prePath, chunks: chunks, batchSize: batchSize, environment: environment, prefilled: true)
                    bestPrefilled = min(bestPrefilled, alone.wall)
                    try check(path: prePath, expected: count, counting: storedReadingCount)
                    try check(path: prePath, expected: count, counting: attributedReadingCount)
                }
                for file in [path, basePath, prePath, plainPath] {
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
                }
            }
            let baseRate = Double(count) / bestBaseline
            let rate = Double(count) / bestMeasured
            if batchSize == 1000 {
                ratioAt1000 = rate / baseRate
                unattributedRow = String(
                    format: "Without attribution (no participants), batches of 1000: %@ rows/s (%.2f× the baseline); with it %.2f× of that.",
                    Harness.format(Double(count) / bestUnattributed), Double(count) / bestUnattributed / baseRate,
                    bestUnattributed / bestMeasured)
            }
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
        report.line(unattributedRow)
        let problems = environment.logSink.summary
        if problems.warnings + problems.errors > 0 {
            report.line("Warnings/errors logged by the sink: \(problems.warnings)/\(problems.errors), last: \(problems.last ?? "")")
        }
        report.line("Budget: ≥ 0.9× the baseline at batches of 1000: " + String(format: "%.2f×, ", ratioAt1000)
            + report.verdict(ratioAt1000 >= 0.9) + ". (CPU per row includes the publishing task, which runs in parallel on the second core.)")
    }

    /// One measured run at batches of 1000 and nothing else, for a profiler
    /// (`valgrind --tool=callgrind healthgate-benchmarks ingest-profile`).
    /// `side` is `store` (the sink, queue pre-filled) or `sql` (the baseline's C loop).
    static func profile(rows: Int, side: String) async throws {
        let environment = try BenchmarkEnvironment(name: "ingest-profile")
        defer { environment.removeAll() }
        let records = try BenchmarkSamples.heartRate(count: rows, ids: SampleIDGenerator())
        if side == "sql" {
            let plain = records.map { record -> Row in
                guard case .quantity(let sample) = record else { return Row(high: 0, low: 0, value: 0, start: 0, end: 0) }
                return Row(high: sample.id.high, low: sample.id.low, value: sample.quantity.value,
                           start: StoreTime.microseconds(sample.startDate), end: StoreTime.microseconds(sample.endDate))
            }
            try baseline(
                path: environment.path("profile.sqlite"), rows: plain, device: BenchmarkSamples.device, batchSize: 1000,
                synchronous: HealthStore.synchronous)
            return
        }
        let chunks = BenchmarkSamples.chunks(records)
        try await measured(path: environment.path("profile.sqlite"), chunks: chunks, batchSize: 1000, environment: environment, prefilled: true)
    }

    /// The real path: publish on a bus, the sink commits, the store closes. With `prefilled`,
    /// everything is published (and the bus finished) before the clock starts, so only the sink
    /// is timed. Returns the wall and CPU seconds timed.
    @discardableResult
    static func measured(
        path: String, chunks: [[HealthRecord]], batchSize: Int, environment: BenchmarkEnvironment, prefilled: Bool = false,
        attributed: Bool = true
    ) async throws -> (wall: Double, cpu: Double) {
        let store = try await HealthStore.open(path: path)
        // As a gateway with participants: the strap is Ana's, and the store's writer attributes
        // every reading to her as it commits it.
        if attributed {
            try await store.attributeReadings(
                by: AttributionRoster([.init(name: "Ana", devices: [BenchmarkSamples.device.localIdentifier ?? ""])]))
        }
        var plugin = environment.plugin("sqlite")
        plugin.store = store
        let sink = try SQLiteSink(settings: .init(batchSize: batchSize, batchWindow: .milliseconds(100)), environment: plugin)
        let board = StatusBoard()
        let status = board.register(name: "sqlite", kind: SQLiteSink.kind, role: .sink)
        let capacity = prefilled ? chunks.reduce(0) { $0 + $1.count } : 10_000
        let bus = SampleBus(
            sinks: [("sqlite", QueueConfiguration(capacity: capacity, policy: .block), { sink.accepts($0) }, status)])
        let inbox = bus.subscriptions[0].inbox
        // A status reporter, as a real source has: publishing also counts records and dates.
        let publisher = SamplePublisher(bus: bus, status: board.register(name: "source", kind: "bench", role: .source))
        let context = SinkContext(logger: environment.logger, clock: environment.clock, status: status)
        if prefilled {
            for chunk in chunks { await publisher.publish(chunk) }
            bus.finish()
        }
        let cpu = Harness.cpuSeconds()
        let start = ContinuousClock.now
        if prefilled {
            try await sink.run(inbox: inbox, context: context)
            await store.close()
            return ((ContinuousClock.now - start).benchmarkSeconds, Harness.cpuSeconds() - cpu)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await sink.run(inbox: inbox, context: context) }
            group.addTask {
                for chunk in chunks { await publisher.publish(chunk) }
                bus.finish()
            }
            try await group.waitForAll()
        }
        await store.close()
        return ((ContinuousClock.now - start).benchmarkSeconds, Harness.cpuSeconds() - cpu)
    }

    struct SQLiteFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// The plain table of the baseline: a sample with nothing the store adds.
    static let plainSchema = """
        CREATE TABLE devices (id INTEGER PRIMARY KEY, name TEXT, manufacturer TEXT, model TEXT,
            firmware_version TEXT, local_identifier TEXT);
        CREATE TABLE samples (uuid BLOB NOT NULL, type TEXT NOT NULL, value REAL NOT NULL, start_us INTEGER NOT NULL,
            end_us INTEGER NOT NULL, device_id INTEGER);
        CREATE INDEX samples_type_start ON samples (type, start_us);
        """

    /// The baseline: the sqlite3 C API and a plain table, nothing else, each commit synced as
    /// `synchronous` (a `PRAGMA synchronous` value) says. Returns the wall and CPU seconds of the
    /// inserts and the close.
    @discardableResult
    static func baseline(
        path: String, rows: [Row], device: Device, batchSize: Int, synchronous: String
    ) throws -> (wall: Double, cpu: Double) {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
            let db
        else { throw SQLiteFailure(description: "open \(path)") }
        var closed = false
        defer { if !closed { sqlite3_close(db) } }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
                throw SQLiteFailure(description: "\(sql.prefix(40)): \(String(cString: sqlite3_errmsg(db)))")
            }
        }
        sqlite3_busy_timeout(db, 5000)
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=\(synchronous)")
        try exec(plainSchema)
        // The device row, once, as any program that points to its devices makes it.
        try exec("BEGIN IMMEDIATE")
        try exec("INSERT INTO devices (name, manufacturer, model, firmware_version, local_identifier) VALUES ('\(device.name ?? "")', '\(device.manufacturer ?? "")', '\(device.model ?? "")', '\(device.firmwareVersion ?? "")', '\(device.localIdentifier ?? "")')")
        try exec("COMMIT")
        let deviceID = sqlite3_last_insert_rowid(db)
        var statement: OpaquePointer?
        let insert = "INSERT INTO samples (uuid, type, value, start_us, end_us, device_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
        guard sqlite3_prepare_v2(db, insert, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw SQLiteFailure(description: "prepare: \(String(cString: sqlite3_errmsg(db)))")
        }
        let cpu = Harness.cpuSeconds()
        let start = ContinuousClock.now
        var index = 0
        while index < rows.count {
            try exec("BEGIN IMMEDIATE")
            for row in rows[index..<min(index + batchSize, rows.count)] {
                var key = (row.high.bigEndian, row.low.bigEndian)
                withUnsafeBytes(of: &key) { _ = shim_bind_blob_transient(statement, 1, $0.baseAddress, 16) }
                _ = shim_bind_text_transient(statement, 2, "heartRate", 9)
                sqlite3_bind_double(statement, 3, row.value)
                sqlite3_bind_int64(statement, 4, row.start)
                sqlite3_bind_int64(statement, 5, row.end)
                sqlite3_bind_int64(statement, 6, deviceID)
                guard sqlite3_step(statement) == SQLITE_DONE else {
                    throw SQLiteFailure(description: "insert: \(String(cString: sqlite3_errmsg(db)))")
                }
                sqlite3_reset(statement)
            }
            try exec("COMMIT")
            index += batchSize
        }
        sqlite3_finalize(statement)
        sqlite3_close(db)
        closed = true
        return ((ContinuousClock.now - start).benchmarkSeconds, Harness.cpuSeconds() - cpu)
    }

    /// Both files must hold every row: a benchmark that loses rows measures nothing.
    /// The readings attributed to the strap's owner, plain or in series.
    static let attributedReadingCount = """
        SELECT (SELECT count(*) FROM samples WHERE metadata_set_id IN \(ownersSets))
            + (SELECT ifnull(sum(count), 0) FROM quantity_series WHERE metadata_set_id IN \(ownersSets))
        """
    private static let ownersSets = "(SELECT set_id FROM metadata_set_entries WHERE key = 'healthgate.person' AND value = 'Ana')"

    static func check(path: String, expected: Int, counting query: String = "SELECT count(*) FROM samples") throws {
        let stored = try storeCount(path, query)
        guard stored == expected else {
            throw SQLiteFailure(description: "\(path): expected \(expected) rows, found \(stored)")
        }
    }
}
