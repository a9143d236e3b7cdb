public import Foundation
public import HealthModel
public import SQLite
import Synchronization

/// One record waiting in the outbox: its HealthJSON bytes and where it sits in the queue.
public struct OutboxEntry: Sendable, Hashable {
    /// The position in the outbox (delivery order).
    public var sequence: Int64
    public var id: SampleID
    public var kind: HealthRecordKind
    /// The record's sample in HealthJSON (the `sample` member of a ``HealthRecord``).
    public var payload: [UInt8]
    public var enqueuedAt: Date

    public init(sequence: Int64, id: SampleID, kind: HealthRecordKind, payload: [UInt8], enqueuedAt: Date) {
        self.sequence = sequence
        self.id = id
        self.kind = kind
        self.payload = payload
        self.enqueuedAt = enqueuedAt
    }
}

/// A record the repository refused (a 4xx other than 401, 403, 408 and 429), kept with the answer.
public struct DeadLetter: Sendable, Hashable, Codable {
    public var id: SampleID
    public var kind: HealthRecordKind
    /// The record's sample in HealthJSON, as text.
    public var payload: String
    public var enqueuedAt: Date
    public var failedAt: Date
    /// The HTTP status of the refusal.
    public var status: Int
    /// The start of the server's answer (at most 4 KiB).
    public var response: String

    enum CodingKeys: String, CodingKey { case id = "uuid", kind, payload, enqueuedAt, failedAt, status, response }
}

/// The outbox's size, for status and for the full check.
public struct OutboxStatistics: Sendable, Hashable {
    public var count: Int
    public var bytes: Int
    public var oldest: Date?
    public var deadLetters: Int
    /// Records dropped by the `dropOldest` policy since the outbox was created.
    public var dropped: Int
}

/// What ``Outbox/append(_:now:limits:)`` did.
public struct OutboxAppendResult: Sendable, Hashable {
    /// Records newly stored (a record already pending is not stored twice).
    public var inserted: Int
    /// Records dropped to stay within the limits (`dropOldest` only).
    public var dropped: Int
}

/// The limits and policy of an outbox.
public struct OutboxLimits: Sendable, Hashable {
    public var maxBytes: Int
    public var maxAge: Double
    public var policy: OutboxPolicy

    public init(maxBytes: Int, maxAge: Double, policy: OutboxPolicy) {
        self.maxBytes = maxBytes
        self.maxAge = maxAge
        self.policy = policy
    }
}

/// The durable queue between the bus and the repository: a SQLite file in WAL mode.
///
/// A record enters in a committed transaction before the bus is told it was taken, and leaves
/// only when the repository acknowledged it (or it was dead-lettered, or dropped by the
/// `dropOldest` policy), so a crash at any point loses nothing: at worst a record is sent twice,
/// and the repository de-duplicates by uuid. Every SQLite call runs on the database's serial
/// queue (``SQLiteDatabase``), never on the cooperative pool. Thread-safe.
public final class Outbox: Sendable {
    /// The file.
    public let path: String
    private let database: SQLiteDatabase
    private let cached: Mutex<OutboxStatistics>

    static let schema = [
        """
        CREATE TABLE pending(
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            uuid BLOB NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            payload BLOB NOT NULL,
            bytes INTEGER NOT NULL,
            enqueued_at REAL NOT NULL);
        CREATE TABLE dead_letters(
            seq INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            payload BLOB NOT NULL,
            bytes INTEGER NOT NULL,
            enqueued_at REAL NOT NULL,
            failed_at REAL NOT NULL,
            status INTEGER NOT NULL,
            response TEXT NOT NULL);
        CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL);
        """,
        // Version 2: the oldest pending record without a scan. `append` and `remove` keep the
        // count and bytes in memory; a full `measure` after each scanned the whole table (every
        // payload page), quadratic while the outbox grows (Benchmarks/RESULTS.md, http).
        "CREATE INDEX pending_by_age ON pending(enqueued_at);",
    ]

    /// Opens (creating if needed) the outbox at `path`.
    /// - Throws: ``SQLiteError`` with the path when the file cannot be opened or migrated.
    public init(path: String) throws(SQLiteError) {
        self.path = path
        let database = try SQLiteDatabase(path: path, label: "outbox")
        self.database = database
        let statistics: OutboxStatistics
        do {
            statistics = try database.performBlocking { connection throws(SQLiteError) -> OutboxStatistics in
                try connection.migrate(Self.schema)
                return try Self.measure(connection)
            }
        } catch let error as SQLiteError {
            throw error
        } catch {
            throw SQLiteError(code: 1, message: "\(error)", context: path)
        }
        self.cached = Mutex(statistics)
    }

    private static func measure(_ connection: SQLiteConnection) throws(SQLiteError) -> OutboxStatistics {
        let pending = try connection.query("SELECT count(*), coalesce(sum(bytes), 0), min(enqueued_at) FROM pending")
        let dead = try connection.query("SELECT count(*) FROM dead_letters")
        let dropped = try connection.query("SELECT value FROM counters WHERE name = 'dropped'")
        let row = pending.first
        return OutboxStatistics(
            count: Int(row?.integer(0) ?? 0), bytes: Int(row?.integer(1) ?? 0),
            oldest: row?.double(2).map { Date(timeIntervalSince1970: $0) },
            deadLetters: Int(dead.first?.integer(0) ?? 0), dropped: Int(dropped.first?.integer(0) ?? 0))
    }

    /// The current size (kept in memory, updated by every change).
    public var statistics: OutboxStatistics { cached.withLock { $0 } }

    /// Whether the outbox is at or over a limit at `now`.
    public func isFull(now: Date, limits: OutboxLimits) -> Bool {
        let statistics = self.statistics
        if statistics.bytes >= limits.maxBytes { return true }
        if let oldest = statistics.oldest, now.timeIntervalSince(oldest) > limits.maxAge { return true }
        return false
    }

    /// Commits records to the outbox. Under `dropOldest`, then drops the oldest pending records
    /// until the outbox is within its limits, in the same transaction.
    public func append(
        _ records: [(id: SampleID, kind: HealthRecordKind, payload: [UInt8])], now: Date, limits: OutboxLimits
    ) async throws -> OutboxAppendResult {
        return try await database.perform { connection in
            let (result, insertedBytes) = try connection.transaction {
                var inserted = 0
                var insertedBytes = 0
                let insert = try connection.statement(
                    "INSERT OR IGNORE INTO pending(uuid, kind, payload, bytes, enqueued_at) VALUES (?, ?, ?, ?, ?)")
                let time = now.timeIntervalSince1970
                for record in records {
                    insert.reset()
                    record.id.bytes.withUnsafeBytes { insert.bind(bytes: $0, at: 1) }
                    insert.bind(record.kind.rawValue, at: 2)
                    record.payload.withUnsafeBytes { insert.bind(bytes: $0, at: 3) }
                    insert.bind(Int64(record.payload.count), at: 4)
                    insert.bind(time, at: 5)
                    try insert.runAndReset()
                    let changed = connection.changes
                    inserted += changed
                    insertedBytes += changed * record.payload.count
                }
                var dropped = 0
                if limits.policy == .dropOldest {
                    dropped = try Self.dropOverflow(connection, now: time, limits: limits)
                }
                return (OutboxAppendResult(inserted: inserted, dropped: dropped), insertedBytes)
            }
            // Still on the database's serial queue, so updates to the cache keep the order of the
            // transactions.
            if result.dropped > 0 {
                let statistics = try Self.measure(connection)
                self.cached.withLock { $0 = statistics }
            } else if result.inserted > 0 {
                self.cached.withLock {
                    $0.count += result.inserted
                    $0.bytes += insertedBytes
                    $0.oldest = min($0.oldest ?? now, now)
                }
            }
            return result
        }
    }

    /// Deletes the oldest pending rows while over a limit; returns how many and counts them.
    private static func dropOverflow(_ connection: SQLiteConnection, now: Double, limits: OutboxLimits) throws -> Int {
        var dropped = try connection.run("DELETE FROM pending WHERE enqueued_at < ?", [.real(now - limits.maxAge)])
        let total = try connection.query("SELECT coalesce(sum(bytes), 0) FROM pending").first?.integer(0) ?? 0
        var excess = total - Int64(limits.maxBytes)
        if excess > 0 {
            // Walk from the oldest, summing sizes, to find the last row that must go.
            var cut: Int64?
            for row in try connection.query("SELECT seq, bytes FROM pending ORDER BY seq") {
                excess -= row.integer(1) ?? 0
                cut = row.integer(0)
                if excess <= 0 { break }
            }
            if let cut {
                dropped += try connection.run("DELETE FROM pending WHERE seq <= ?", [.integer(cut)])
            }
        }
        if dropped > 0 {
            try connection.run(
                "INSERT INTO counters(name, value) VALUES ('dropped', ?) "
                    + "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value", [.integer(Int64(dropped))])
        }
        return dropped
    }

    /// Drops records that outlived `limits.maxAge` (`dropOldest` only); returns how many.
    public func expire(now: Date, limits: OutboxLimits) async throws -> Int {
        guard limits.policy == .dropOldest else { return 0 }
        let (dropped, statistics) = try await database.perform { connection in
            try connection.transaction {
                (try Self.dropOverflow(connection, now: now.timeIntervalSince1970, limits: limits), try Self.measure(connection))
            }
        }
        cached.withLock { $0 = statistics }
        return dropped
    }

    /// The oldest `limit` pending records, in delivery order.
    public func peek(limit: Int) async throws -> [OutboxEntry] {
        try await database.perform { connection in
            try connection.query(
                "SELECT seq, uuid, kind, payload, enqueued_at FROM pending ORDER BY seq LIMIT ?", [.integer(Int64(limit))]
            ).compactMap(Self.entry)
        }
    }

    private static func entry(_ row: SQLiteRow) -> OutboxEntry? {
        guard let sequence = row.integer(0), let id = row.blob(1).flatMap(SampleID.init(bytes:)),
            let kind = row.text(2).flatMap(HealthRecordKind.init(rawValue:)), let payload = row.blob(3),
            let time = row.double(4)
        else { return nil }
        return OutboxEntry(sequence: sequence, id: id, kind: kind, payload: payload, enqueuedAt: Date(timeIntervalSince1970: time))
    }

    /// The entries among `entries` that are still pending (the `dropOldest` policy may have
    /// dropped some while a delivery was waiting to retry).
    public func stillPending(_ entries: [OutboxEntry]) async throws -> [OutboxEntry] {
        let sequences = entries.map(\.sequence)
        let present = try await database.perform { connection in
            let select = try connection.statement("SELECT 1 FROM pending WHERE seq = ?")
            var present = Set<Int64>()
            for sequence in sequences {
                select.reset()
                select.bind(sequence, at: 1)
                if try select.step() { present.insert(sequence) }
                select.reset()
            }
            return present
        }
        return entries.filter { present.contains($0.sequence) }
    }

    /// Removes delivered records.
    public func remove(_ entries: [OutboxEntry]) async throws {
        try await database.perform { connection in
            let (removed, removedBytes, oldest) = try connection.transaction {
                let delete = try connection.statement("DELETE FROM pending WHERE seq = ?")
                var removed = 0
                var removedBytes = 0
                for entry in entries {
                    delete.reset()
                    delete.bind(entry.sequence, at: 1)
                    try delete.runAndReset()
                    // `bytes` was stored as the payload's size.
                    let changed = connection.changes
                    removed += changed
                    removedBytes += changed * entry.payload.count
                }
                // min() over the indexed column is one index lookup (SQLite's min/max optimisation).
                let oldest = try connection.query("SELECT min(enqueued_at) FROM pending").first?.double(0)
                return (removed, removedBytes, oldest)
            }
            // On the serial queue: see `append`.
            self.cached.withLock {
                $0.count -= removed
                $0.bytes -= removedBytes
                $0.oldest = oldest.map { Date(timeIntervalSince1970: $0) }
            }
        }
    }

    /// Moves refused records to the dead-letter table with the server's status and answer.
    public func deadLetter(_ entries: [OutboxEntry], status: Int, response: String, now: Date) async throws {
        let answer = String(response.prefix(4096))
        let statistics = try await database.perform { connection in
            try connection.transaction {
                for entry in entries {
                    try connection.run(
                        "INSERT OR REPLACE INTO dead_letters(seq, uuid, kind, payload, bytes, enqueued_at, failed_at, status, response) "
                            + "SELECT seq, uuid, kind, payload, bytes, enqueued_at, ?, ?, ? FROM pending WHERE seq = ?",
                        [.real(now.timeIntervalSince1970), .integer(Int64(status)), .text(answer), .integer(entry.sequence)])
                    try connection.run("DELETE FROM pending WHERE seq = ?", [.integer(entry.sequence)])
                }
                return try Self.measure(connection)
            }
        }
        cached.withLock { $0 = statistics }
    }

    /// Every dead letter, oldest first.
    public func deadLetters() async throws -> [DeadLetter] {
        try await database.perform { connection in
            try connection.query(
                "SELECT uuid, kind, payload, enqueued_at, failed_at, status, response FROM dead_letters ORDER BY seq"
            ).compactMap { row -> DeadLetter? in
                guard let id = row.blob(0).flatMap(SampleID.init(bytes:)),
                    let kind = row.text(1).flatMap(HealthRecordKind.init(rawValue:)), let payload = row.blob(2)
                else { return nil }
                return DeadLetter(
                    id: id, kind: kind, payload: String(decoding: payload, as: UTF8.self),
                    enqueuedAt: Date(timeIntervalSince1970: row.double(3) ?? 0),
                    failedAt: Date(timeIntervalSince1970: row.double(4) ?? 0), status: Int(row.integer(5) ?? 0),
                    response: row.text(6) ?? "")
            }
        }
    }

    /// Moves dead letters back to pending (all of them, or those with the given ids), keeping
    /// their place in the delivery order. Returns how many moved. A running gateway picks them up
    /// on its next delivery.
    @discardableResult
    public func retryDeadLetters(ids: [SampleID]? = nil) async throws -> Int {
        let (moved, statistics) = try await database.perform { connection in
            try connection.transaction {
                var moved = 0
                let selected: [Int64]
                if let ids {
                    selected = try ids.compactMap {
                        try connection.query("SELECT seq FROM dead_letters WHERE uuid = ?", [.blob($0.bytes)]).first?.integer(0)
                    }
                } else {
                    selected = try connection.query("SELECT seq FROM dead_letters").compactMap { $0.integer(0) }
                }
                for seq in selected {
                    moved += try connection.run(
                        "INSERT OR IGNORE INTO pending(seq, uuid, kind, payload, bytes, enqueued_at) "
                            + "SELECT seq, uuid, kind, payload, bytes, enqueued_at FROM dead_letters WHERE seq = ?",
                        [.integer(seq)])
                    try connection.run("DELETE FROM dead_letters WHERE seq = ?", [.integer(seq)])
                }
                return (moved, try Self.measure(connection))
            }
        }
        cached.withLock { $0 = statistics }
        return moved
    }

    /// Re-reads the sizes from the file (after another process changed it, e.g. the CLI).
    public func refresh() async throws {
        let statistics = try await database.perform { try Self.measure($0) }
        cached.withLock { $0 = statistics }
    }
}
