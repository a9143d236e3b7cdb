import CSQLite
import Foundation
import HealthModel
import GatewayRuntime
import SampleBus
import Synchronization

/// A log sink that keeps only warnings and errors, counted, so a benchmark can say whether the
/// measured path complained without paying for formatting every info line.
final class CountingLogSink: LogSink {
    private let counts = Mutex<(warnings: Int, errors: Int, last: String?)>((0, 0, nil))

    func write(_ entry: LogEntry) {
        guard entry.level >= .warning else { return }
        counts.withLock {
            if entry.level >= .error { $0.errors += 1 } else { $0.warnings += 1 }
            $0.last = "\(entry.label): \(entry.message)"
        }
    }

    var summary: (warnings: Int, errors: Int, last: String?) { counts.withLock { $0 } }
}

/// What every benchmark needs to build plugins: a logger that counts problems, the system clock,
/// a UUIDv7 generator and a private temporary directory.
struct BenchmarkEnvironment {
    let directory: URL
    let logSink = CountingLogSink()
    let clock: any GatewayClock

    init(name: String, clock: any GatewayClock = SystemClock()) throws {
        self.clock = clock
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("healthgate-bench-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    var logger: Logger { Logger(label: "bench", sink: logSink, level: .warning) }

    func plugin(_ name: String, ids: SampleIDGenerator = SampleIDGenerator()) -> PluginEnvironment {
        PluginEnvironment(
            name: name, logger: logger, clock: clock, ids: ids,
            paths: GatewayPaths(dataDirectory: directory, stateDirectory: directory, runtimeDirectory: directory),
            variables: [:])
    }

    func path(_ file: String) -> String { directory.appendingPathComponent(file).path }

    func removeAll() { try? FileManager.default.removeItem(at: directory) }
}

/// A clock whose dates advance with the monotonic clock from the wall-clock date it was made at:
/// a benchmark that measures a delay as the difference of two dates the gateway reads (a sample's
/// arrival, a commit) reads them on this, so that no step of the wall clock enters a delay.
struct MonotonicDateClock: GatewayClock {
    private let origin = Date()
    private let start = ContinuousClock.now

    func now() -> Date { origin.addingTimeInterval((ContinuousClock.now - start).benchmarkSeconds) }
    func uptime() -> Duration { SystemClock().uptime() }
    func sleep(for duration: Duration) async throws { try await ContinuousClock().sleep(for: duration) }
}

/// Keeps a value alive and opaque to the optimizer, so a measured loop is not folded away.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

extension Array where Element == Double {
    /// The q-quantile (0…1) by nearest rank of the sorted values; nil when empty.
    func quantile(_ q: Double) -> Double? {
        guard !isEmpty else { return nil }
        let sorted = self.sorted()
        let rank = Swift.min(sorted.count - 1, Swift.max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))
        return sorted[rank]
    }
}

/// The number a `SELECT count(…)` gives on a database file, read through its own read-only
/// connection: what a benchmark checks its load with (rows stored, devices seen).
/// - Throws: ``StoreCountFailure`` when the file or the query cannot be read.
func storeCount(_ path: String, _ query: String) throws -> Int {
    try withReadOnlyStatement(path, query) { db, statement in
        guard sqlite3_step(statement) == SQLITE_ROW else {
            throw StoreCountFailure(description: "\(path): \(query): \(String(cString: sqlite3_errmsg(db)))")
        }
        return Int(sqlite3_column_int64(statement, 0))
    }
}

/// The first column of every row a query gives on a database file, as text, read through its own
/// read-only connection.
/// - Throws: ``StoreCountFailure`` when the file or the query cannot be read.
func storeText(_ path: String, _ query: String) throws -> [String] {
    try withReadOnlyStatement(path, query) { db, statement in
        var rows: [String] = []
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: rows.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "")
            case SQLITE_DONE: return rows
            default: throw StoreCountFailure(description: "\(path): \(query): \(String(cString: sqlite3_errmsg(db)))")
            }
        }
    }
}

/// Runs `body` with `query` prepared on a read-only connection of its own to the database file
/// `path` (the connection, then the statement), and finalizes and closes both after it.
/// - Throws: ``StoreCountFailure`` when the file cannot be opened or the query prepared; what
///   `body` throws.
private func withReadOnlyStatement<Result>(
    _ path: String, _ query: String, _ body: (OpaquePointer, OpaquePointer?) throws -> Result
) throws -> Result {
    var db: OpaquePointer?
    defer { sqlite3_close(db) }
    guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
        throw StoreCountFailure(description: "\(path): cannot open it")
    }
    var statement: OpaquePointer?
    defer { sqlite3_finalize(statement) }
    guard sqlite3_prepare_v2(db, query, -1, &statement, nil) == SQLITE_OK else {
        throw StoreCountFailure(description: "\(path): \(query): \(String(cString: sqlite3_errmsg(db)))")
    }
    return try body(db, statement)
}

/// The heart-rate readings a store holds, each counted once: its plain heart-rate samples and
/// the quantities of its heart-rate series (the store's writer folds readings of a type with a
/// series policy into quantity series; a late reading stays a plain sample).
let heartRateSampleCount = """
    SELECT ifnull((SELECT (SELECT count(*) FROM samples s WHERE s.type_id = t.id)
            + (SELECT ifnull(sum(q.count), 0) FROM quantity_series q WHERE q.type_id = t.id)
        FROM quantity_types t WHERE t.identifier = 'heartRate'), 0)
    """

/// The heart-rate quantity series a store holds.
let heartRateSeriesCount =
    "SELECT count(*) FROM quantity_series JOIN quantity_types ON quantity_types.id = quantity_series.type_id WHERE identifier = 'heartRate'"

/// Every reading a store holds, of any type: its plain samples and its series' quantities.
let storedReadingCount = "SELECT (SELECT count(*) FROM samples) + (SELECT ifnull(sum(count), 0) FROM quantity_series)"

/// The devices whose readings a store holds, as plain samples or in series.
let storedDeviceCount = "SELECT count(*) FROM (SELECT device_id FROM samples UNION SELECT device_id FROM quantity_series)"

struct StoreCountFailure: Error, CustomStringConvertible {
    var description: String
}

/// Why ``freeLoopbackPort()`` found no port.
struct LoopbackPortFailure: Error, CustomStringConvertible {
    var description: String
}

/// A TCP port on 127.0.0.1 that nothing listens on now (bound to port 0, read, closed): the
/// board's in the `class` benchmark, the broker's in `mqtt`.
func freeLoopbackPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw LoopbackPortFailure(description: "socket: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw LoopbackPortFailure(description: "bind 127.0.0.1:0: \(String(cString: strerror(errno)))") }
    return UInt16(bigEndian: address.sin_port)
}

/// A statically linked program `Benchmarks/run` copies beside the report was not there.
struct MissingProgram: Error, CustomStringConvertible {
    /// Where it was looked for.
    var path: String
    var description: String { "\(path) is missing: build it with Benchmarks/run (static release build)" }
}

/// The path of `name` in `staticDirectory`, where `Benchmarks/run` copies the static release
/// builds; throws ``MissingProgram`` when it is not an executable there.
func staticProgram(_ name: String, in staticDirectory: String) throws -> String {
    let path = URL(fileURLWithPath: staticDirectory).appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: path) else { throw MissingProgram(path: path) }
    return path
}
