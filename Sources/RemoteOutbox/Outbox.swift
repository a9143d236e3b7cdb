public import Foundation
public import HealthModel
public import SQLite
import Synchronization

/// The outbox's size, for status and for the full check.
public struct OutboxStatistics: Sendable, Hashable {
    /// Pending records.
    public var count: Int
    /// Their HealthJSON bytes.
    public var bytes: Int
    /// When the oldest pending record entered.
    public var oldest: Date?
    public var deadLetters: Int
    /// Records dropped by the `dropOldest` policy since the outbox was created.
    public var dropped: Int
    /// Pending batches, sealed or not.
    public var batches: Int = 0
    /// Pending records in unsealed batches.
    public var unsealed: Int = 0
    /// When the oldest record in an unsealed batch entered.
    public var oldestUnsealed: Date?
}

/// What ``Outbox/append(_:now:limits:)`` did.
public struct OutboxAppendResult: Sendable, Hashable {
    /// Records newly stored (a batch already pending, the same key, is not stored twice).
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

/// The durable queue between the bus and a remote sink (an HTTP repository, an MQTT broker): a SQLite file in WAL mode holding
/// encoded batches.
///
/// Records enter as batches in one committed transaction before the bus is told they were taken.
/// A batch is one row: its key (the identity a consumer de-duplicates by), its records (for
/// bisection and dead letters) and, once sealed, its wire body, encoded once and sent unchanged
/// on every attempt and after every restart. A batch leaves only when the repository
/// acknowledged it (one `DELETE`), when it is split into halves (in the same transaction as
/// the halves are stored), when its single record is dead-lettered, or when the `dropOldest`
/// policy drops it. A crash at any point therefore loses nothing, and a resend carries the same
/// records under the same key.
///
/// The outbox knows nothing of the wire: the sink encodes bodies (``seal(maxRecords:now:encode:)``,
/// ``split(_:now:encode:)``). Every SQLite call runs on the database's serial queue
/// (``SQLiteDatabase``), never on the cooperative pool. Thread-safe.
public final class Outbox: Sendable {
    /// The file.
    public let path: String
    private let database: SQLiteDatabase
    private let cached: Mutex<OutboxStatistics>

    /// How many records a batch formed from an older outbox's single records holds.
    static let upgradeBatchSize = 500

    static let schema: [SQLiteMigration] = [
        .sql("""
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
            """),
        .sql("CREATE INDEX pending_by_age ON pending(enqueued_at);"),
        // Version 3: batches instead of single records. One row per batch (an insert and a
        // delete per 500 records, not per record) with a key that never changes. The small
        // columns come first, so that counting reads no overflow page of the blobs. The single
        // records of an older outbox become unsealed batches here, in the migration's
        // transaction: upgraded, not lost.
        .code { connection throws(SQLiteError) in
            try connection.execute("""
                CREATE TABLE batches(
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    key TEXT NOT NULL UNIQUE,
                    count INTEGER NOT NULL,
                    bytes INTEGER NOT NULL,
                    enqueued_at REAL NOT NULL,
                    sealed INTEGER NOT NULL,
                    content_encoding TEXT,
                    records BLOB NOT NULL,
                    body BLOB);
                """)
            var records: [OutboxRecord] = []
            for row in try connection.query("SELECT uuid, kind, payload, enqueued_at FROM pending ORDER BY seq") {
                guard let id = row.blob(0).flatMap(SampleID.init(bytes:)),
                    let kind = row.text(1).flatMap(HealthRecordKind.init(rawValue:)), let payload = row.blob(2),
                    let time = row.double(3)
                else {
                    throw SQLiteError(code: 1, message: "an unreadable pending record", context: "outbox upgrade to batches")
                }
                records.append(OutboxRecord(id: id, kind: kind, payload: payload, enqueuedAt: Date(timeIntervalSince1970: time)))
            }
            // The records' layout of versions 3 and 4 (``OutboxRecordFraming``); version 5 rewrites it.
            for first in stride(from: 0, to: records.count, by: upgradeBatchSize) {
                let batch = Array(records[first..<min(first + upgradeBatchSize, records.count)])
                try connection.run(
                    "INSERT OR IGNORE INTO batches(key, count, bytes, enqueued_at, sealed, records) VALUES (?, ?, ?, ?, 0, ?)",
                    [
                        .text(OutboxBatchKey.key(for: batch.map(\.id))), .integer(Int64(batch.count)),
                        .integer(Int64(batch.reduce(0) { $0 + $1.payload.count })),
                        .real(batch.map(\.enqueuedAt.timeIntervalSince1970).min() ?? 0),
                        .blob(OutboxRecordFraming.encode(batch)),
                    ])
            }
            try connection.execute("DROP TABLE pending")
        },
        // Version 4: the totals (`measure`, after every append and removal) come from a covering
        // index. Read from the table, each batch's row costs a page read, its first page being
        // mostly blob: with 900 batches pending that was megabytes per commit.
        .sql("CREATE INDEX batches_totals ON batches(sealed, enqueued_at, count, bytes);"),
        // Version 5: a batch's records in ``OutboxRecordIndex``'s layout, which can leave the
        // payloads in the body instead of storing them twice (storing every payload beside its
        // body costs 2.5 µs of CPU per sample in the HTTP benchmark).
        // The pending rows are rewritten here, payloads kept in the blob, in the migration's
        // transaction.
        .code { connection throws(SQLiteError) in
            for row in try connection.query("SELECT id, records FROM batches ORDER BY id") {
                guard let id = row.integer(0), let blob = row.blob(1), let records = OutboxRecordFraming.decode(blob) else {
                    throw SQLiteError(code: 11, message: "a pending batch's records are damaged", context: "outbox upgrade to version 5")
                }
                try connection.run(
                    "UPDATE batches SET records = ? WHERE id = ?",
                    [.blob(OutboxRecordIndex.encode(records, offsets: nil)), .integer(id)])
            }
        },
    ]

    /// Opens (creating if needed) the outbox at `path`, upgrading an older file's single records
    /// to unsealed batches.
    /// - Throws: ``SQLiteError`` with the path when the file cannot be opened or migrated.
    public init(path: String) throws(SQLiteError) {
        self.path = path
        let statistics: OutboxStatistics
        do {
            (database, statistics) = try SQLiteDatabase.opening(path: path, label: "outbox") {
                connection throws(SQLiteError) -> OutboxStatistics in
                try connection.migrate(Self.schema)
                // Debian's SQLite zeroes every freed page by default (SQLITE_SECURE_DELETE): each
                // acknowledged batch's bytes would be written again through the WAL and at the
                // checkpoint. FAST clears only what is written anyway (README.md).
                try connection.execute("PRAGMA secure_delete = FAST")
                return try Self.measure(connection)
            }
        } catch let error as SQLiteError {
            throw error
        } catch {
            throw SQLiteError(code: 1, message: "\(error)", context: path)
        }
        self.cached = Mutex(statistics)
    }

    /// The pending batches' totals; answered from the covering index `batches_totals`.
    static let totalsQuery =
        "SELECT count(*), coalesce(sum(count), 0), coalesce(sum(bytes), 0), min(enqueued_at), "
        + "coalesce(sum(CASE WHEN sealed = 0 THEN count ELSE 0 END), 0), "
        + "min(CASE WHEN sealed = 0 THEN enqueued_at END) FROM batches"

    private static func measure(_ connection: SQLiteConnection) throws(SQLiteError) -> OutboxStatistics {
        let pending = try connection.query(totalsQuery)
        let dead = try connection.query("SELECT count(*) FROM dead_letters")
        let dropped = try connection.query("SELECT value FROM counters WHERE name = 'dropped'")
        let row = pending.first
        return OutboxStatistics(
            count: Int(row?.integer(1) ?? 0), bytes: Int(row?.integer(2) ?? 0),
            oldest: row?.double(3).map { Date(timeIntervalSince1970: $0) },
            deadLetters: Int(dead.first?.integer(0) ?? 0), dropped: Int(dropped.first?.integer(0) ?? 0),
            batches: Int(row?.integer(0) ?? 0), unsealed: Int(row?.integer(4) ?? 0),
            oldestUnsealed: row?.double(5).map { Date(timeIntervalSince1970: $0) })
    }

    /// Inserts one batch (ignored when a batch with its key is pending); returns whether it was
    /// stored. `id` places it in the delivery order (nil: last).
    @discardableResult
    private static func insert(_ batch: NewOutboxBatch, id: Int64?, _ connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        guard !batch.records.isEmpty else { return false }
        var bytes = 0
        var oldest = Double.infinity
        for record in batch.records {
            bytes += record.payload.count
            oldest = min(oldest, record.enqueuedAt.timeIntervalSince1970)
        }
        let statement = try connection.statement(
            "INSERT OR IGNORE INTO batches(id, key, count, bytes, enqueued_at, sealed, content_encoding, records, body) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        try statement.bind(id.map(SQLiteValue.integer) ?? .null, at: 1)
        statement.bind(batch.key, at: 2)
        statement.bind(Int64(batch.records.count), at: 3)
        statement.bind(Int64(bytes), at: 4)
        statement.bind(oldest, at: 5)
        statement.bind(Int64(batch.body == nil ? 0 : 1), at: 6)
        statement.bind(batch.body?.contentEncoding, at: 7)
        // The payloads stay out of the blob only when the body holds every one of them.
        let offsets = batch.body.flatMap { $0.unusable.isEmpty ? $0.payloadOffsets : nil }
        OutboxRecordIndex.encode(batch.records, offsets: offsets).withUnsafeBytes { statement.bind(bytes: $0, at: 8) }
        if let body = batch.body {
            body.bytes.withUnsafeBytes { statement.bind(bytes: $0, at: 9) }
        } else {
            try statement.bind(.null, at: 9)
        }
        try statement.runAndReset()
        return connection.changes > 0
    }

    /// The records of a row selected as `records, body, content_encoding` from column `first` on.
    /// - Throws: ``SQLiteError`` when they are damaged, or their payloads are in a body that
    ///   cannot be decompressed.
    private static func records(_ row: SQLiteRow, from first: Int, batch: Int64?, path: String) throws(SQLiteError) -> [OutboxRecord] {
        let damaged = SQLiteError(code: 11, message: "the records of batch \(batch.map(String.init) ?? "?") are damaged", context: path)
        guard let blob = row.blob(first) else { throw damaged }
        var plain: [UInt8]?
        if OutboxRecordIndex.needsBody(blob) {
            guard let body = row.blob(first + 1) else { throw damaged }
            switch row.text(first + 2) {
            case nil: plain = body
            case "gzip"?:
                do {
                    plain = Array(try Gzip.decompress(Data(body)))
                } catch {
                    throw SQLiteError(code: 11, message: "the body of batch \(batch.map(String.init) ?? "?") cannot be decompressed: \(error)", context: path)
                }
            default: throw damaged
            }
        }
        guard let records = OutboxRecordIndex.decode(blob, plainBody: plain) else { throw damaged }
        return records
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

    /// Commits batches to the outbox in one transaction. Under `dropOldest`, then drops the
    /// oldest pending batches until the outbox is within its limits, in the same transaction.
    public func append(_ batches: [NewOutboxBatch], now: Date, limits: OutboxLimits) async throws -> OutboxAppendResult {
        try await database.perform { connection in
            let (result, statistics) = try connection.transaction {
                var inserted = 0
                for batch in batches where try Self.insert(batch, id: nil, connection) {
                    inserted += batch.records.count
                }
                var dropped = 0
                if limits.policy == .dropOldest {
                    dropped = try Self.dropOverflow(connection, now: now.timeIntervalSince1970, limits: limits)
                }
                return (OutboxAppendResult(inserted: inserted, dropped: dropped), try Self.measure(connection))
            }
            // Still on the database's serial queue, so updates to the cache keep the order of the
            // transactions.
            self.cached.withLock { $0 = statistics }
            return result
        }
    }

    /// Deletes the oldest pending batches while over a limit; returns how many records went and
    /// counts them.
    private static func dropOverflow(_ connection: SQLiteConnection, now: Double, limits: OutboxLimits) throws -> Int {
        var dropped = Int(try connection.query(
            "SELECT coalesce(sum(count), 0) FROM batches WHERE enqueued_at < ?", [.real(now - limits.maxAge)]
        ).first?.integer(0) ?? 0)
        try connection.run("DELETE FROM batches WHERE enqueued_at < ?", [.real(now - limits.maxAge)])
        let total = try connection.query("SELECT coalesce(sum(bytes), 0) FROM batches").first?.integer(0) ?? 0
        var excess = total - Int64(limits.maxBytes)
        if excess > 0 {
            // Walk from the oldest, summing sizes, to find the last batch that must go.
            var cut: Int64?
            for row in try connection.query("SELECT id, bytes, count FROM batches ORDER BY id") {
                excess -= row.integer(1) ?? 0
                dropped += Int(row.integer(2) ?? 0)
                cut = row.integer(0)
                if excess <= 0 { break }
            }
            if let cut {
                try connection.run("DELETE FROM batches WHERE id <= ?", [.integer(cut)])
            }
        }
        if dropped > 0 {
            try connection.run(
                "INSERT INTO counters(name, value) VALUES ('dropped', ?) "
                    + "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value", [.integer(Int64(dropped))])
        }
        return dropped
    }

    /// Drops batches that outlived `limits.maxAge` (`dropOldest` only); returns how many records.
    public func expire(now: Date, limits: OutboxLimits) async throws -> Int {
        guard limits.policy == .dropOldest else { return 0 }
        return try await database.perform { connection in
            let (dropped, statistics) = try connection.transaction {
                (try Self.dropOverflow(connection, now: now.timeIntervalSince1970, limits: limits), try Self.measure(connection))
            }
            self.cached.withLock { $0 = statistics }
            return dropped
        }
    }

    /// The first batch in delivery order, with its body when it is sealed (one read: the delivery
    /// sends it as it comes); nil when the outbox is empty.
    public func head() async throws -> OutboxHead? {
        try await database.perform { connection in
            guard let row = try connection.query(
                "SELECT id, sealed, key, count, enqueued_at, content_encoding, body FROM batches ORDER BY id LIMIT 1"
            ).first, let id = row.integer(0)
            else { return nil }
            let sealed = row.integer(1) != 0
            return OutboxHead(id: id, sealed: sealed, batch: sealed ? Self.sealedBatch(row, id: id) : nil)
        }
    }

    /// The sealed batch `id`, ready to send; nil when it is no longer pending (delivered, dropped)
    /// or not sealed.
    public func batch(_ id: Int64) async throws -> OutboxBatch? {
        try await database.perform { connection in
            try connection.query(
                "SELECT id, sealed, key, count, enqueued_at, content_encoding, body FROM batches WHERE id = ? AND sealed = 1",
                [.integer(id)]
            ).first.flatMap { Self.sealedBatch($0, id: id) }
        }
    }

    /// A sealed batch from a row selected as `id, sealed, key, count, enqueued_at,
    /// content_encoding, body`; nil when a column is missing.
    private static func sealedBatch(_ row: SQLiteRow, id: Int64) -> OutboxBatch? {
        guard let key = row.text(2), let count = row.integer(3), let time = row.double(4) else { return nil }
        return OutboxBatch(
            id: id, key: key, count: Int(count), enqueuedAt: Date(timeIntervalSince1970: time),
            body: OutboxBody(bytes: row.blob(6) ?? [], contentEncoding: row.text(5)))
    }

    /// The records of batch `id`; empty when it is no longer pending.
    /// - Throws: ``SQLiteError`` also when the stored records are damaged.
    public func records(of id: Int64) async throws -> [OutboxRecord] {
        let path = path
        return try await database.perform { connection in
            guard let row = try connection.query(
                "SELECT records, body, content_encoding FROM batches WHERE id = ?", [.integer(id)]
            ).first else { return [] }
            return try Self.records(row, from: 0, batch: id, path: path)
        }
    }

    /// Every pending record, in delivery order (for tests and tools; reads every batch).
    public func pendingRecords() async throws -> [OutboxRecord] {
        let path = path
        return try await database.perform { connection in
            var records: [OutboxRecord] = []
            for row in try connection.query("SELECT id, records, body, content_encoding FROM batches ORDER BY id") {
                records += try Self.records(row, from: 1, batch: row.integer(0), path: path)
            }
            return records
        }
    }

    /// The keys of the pending batches, in delivery order.
    public func pendingKeys() async throws -> [String] {
        try await database.perform { connection in
            try connection.query("SELECT key FROM batches ORDER BY id").compactMap { $0.text(0) }
        }
    }

    /// Seals unsealed batches: merges them in order into batches of at most `maxRecords`, encodes
    /// each once with `encode` (on the outbox's queue), and stores them sealed, in one
    /// transaction. A merged batch takes the place of the first batch it absorbed and the key of
    /// its records' uuids; a batch sealed alone keeps its row and key. Records `encode` reports
    /// unusable are dead-lettered in the same transaction (status 0). Returns how many were.
    @discardableResult
    public func seal(
        maxRecords: Int, now: Date, encode: @escaping @Sendable ([OutboxRecord]) -> OutboxBody
    ) async throws -> Int {
        let path = path
        return try await database.perform { connection in
            let (unusable, statistics) = try connection.transaction {
                var places: [Int64] = []
                var records: [OutboxRecord] = []
                let limit = max(1, maxRecords)
                for row in try connection.query("SELECT id, records, body, content_encoding FROM batches WHERE sealed = 0 ORDER BY id") {
                    guard let id = row.integer(0) else {
                        throw SQLiteError(code: 11, message: "an unsealed batch's records are damaged", context: path)
                    }
                    places.append(id)
                    records += try Self.records(row, from: 1, batch: id, path: path)
                    if records.count >= limit { break }
                }
                guard !places.isEmpty else { return (0, try Self.measure(connection)) }
                try connection.run(
                    "DELETE FROM batches WHERE id IN (\(places.map(String.init).joined(separator: ",")))")
                var unusable = 0
                for (index, first) in stride(from: 0, to: records.count, by: limit).enumerated() {
                    var chunk = Array(records[first..<min(first + limit, records.count)])
                    let body = encode(chunk)
                    if !body.unusable.isEmpty {
                        let refused = Set(body.unusable.map(\.id))
                        try Self.bury(body.unusable, status: 0, response: "the stored record cannot be encoded", now: now, connection)
                        chunk.removeAll { refused.contains($0.id) }
                        unusable += body.unusable.count
                    }
                    try Self.insert(NewOutboxBatch(records: chunk, body: body), id: index < places.count ? places[index] : nil, connection)
                }
                return (unusable, try Self.measure(connection))
            }
            self.cached.withLock { $0 = statistics }
            return unusable
        }
    }

    /// Replaces the sealed batch `batch` by its two halves (first half: the first
    /// `count / 2` records), keyed ``OutboxBatchKey/halves(of:)`` and encoded with `encode`, in
    /// one transaction. The first half takes the batch's place in the order, the second goes
    /// last. Returns the halves' rows, first half first (one row when a half had no usable
    /// record; none when the batch is no longer pending).
    public func split(
        _ batch: OutboxBatch, now: Date, encode: @escaping @Sendable ([OutboxRecord]) -> OutboxBody
    ) async throws -> [Int64] {
        let path = path
        return try await database.perform { connection in
            let (rows, statistics) = try connection.transaction {
                guard let row = try connection.query(
                    "SELECT records, body, content_encoding FROM batches WHERE id = ?", [.integer(batch.id)]
                ).first else { return ([Int64](), try Self.measure(connection)) }
                let records = try Self.records(row, from: 0, batch: batch.id, path: path)
                guard records.count > 1 else {
                    throw SQLiteError(code: 11, message: "batch \(batch.id) cannot be split", context: path)
                }
                try connection.run("DELETE FROM batches WHERE id = ?", [.integer(batch.id)])
                let keys = OutboxBatchKey.halves(of: batch.key)
                let half = records.count / 2
                var rows: [Int64] = []
                for (key, part, place) in [(keys.first, records[..<half], Optional(batch.id)), (keys.second, records[half...], nil)] {
                    var chunk = Array(part)
                    let body = encode(chunk)
                    if !body.unusable.isEmpty {
                        let refused = Set(body.unusable.map(\.id))
                        try Self.bury(body.unusable, status: 0, response: "the stored record cannot be encoded", now: now, connection)
                        chunk.removeAll { refused.contains($0.id) }
                    }
                    var half = NewOutboxBatch(records: chunk, body: body)
                    half.key = key
                    if try Self.insert(half, id: place, connection) { rows.append(connection.lastInsertRowID) }
                }
                return (rows, try Self.measure(connection))
            }
            self.cached.withLock { $0 = statistics }
            return rows
        }
    }

    /// Removes the acknowledged batch `id` (one statement).
    public func remove(_ id: Int64) async throws {
        try await database.perform { connection in
            let statistics = try connection.transaction {
                try connection.run("DELETE FROM batches WHERE id = ?", [.integer(id)])
                return try Self.measure(connection)
            }
            self.cached.withLock { $0 = statistics }
        }
    }

    /// Moves the records of batch `id` to the dead-letter table with the server's status and
    /// answer, and removes the batch, in one transaction.
    public func deadLetter(_ id: Int64, status: Int, response: String, now: Date) async throws {
        let path = path
        try await database.perform { connection in
            let statistics = try connection.transaction {
                guard let row = try connection.query(
                    "SELECT records, body, content_encoding FROM batches WHERE id = ?", [.integer(id)]
                ).first else { return try Self.measure(connection) }
                let records = try Self.records(row, from: 0, batch: id, path: path)
                try Self.bury(records, status: status, response: response, now: now, connection)
                try connection.run("DELETE FROM batches WHERE id = ?", [.integer(id)])
                return try Self.measure(connection)
            }
            self.cached.withLock { $0 = statistics }
        }
    }

    private static func bury(
        _ records: [OutboxRecord], status: Int, response: String, now: Date, _ connection: SQLiteConnection
    ) throws(SQLiteError) {
        let answer = String(response.prefix(4096))
        for record in records {
            try connection.run(
                "INSERT OR REPLACE INTO dead_letters(uuid, kind, payload, bytes, enqueued_at, failed_at, status, response) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    .blob(record.id.bytes), .text(record.kind.rawValue), .blob(record.payload),
                    .integer(Int64(record.payload.count)), .real(record.enqueuedAt.timeIntervalSince1970),
                    .real(now.timeIntervalSince1970), .integer(Int64(status)), .text(answer),
                ])
        }
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

    /// Moves dead letters back to pending (all of them, or those with the given ids) as unsealed
    /// batches, which the sink seals in its configured format before sending them. Returns how
    /// many moved. A running gateway picks them up on its next delivery.
    @discardableResult
    public func retryDeadLetters(ids: [SampleID]? = nil) async throws -> Int {
        try await database.perform { connection in
            let (moved, statistics) = try connection.transaction {
                var rows: [SQLiteRow]
                if let ids {
                    rows = []
                    for id in ids {
                        rows += try connection.query(
                            "SELECT seq, uuid, kind, payload, enqueued_at FROM dead_letters WHERE uuid = ?", [.blob(id.bytes)])
                    }
                } else {
                    rows = try connection.query("SELECT seq, uuid, kind, payload, enqueued_at FROM dead_letters ORDER BY seq")
                }
                var records: [OutboxRecord] = []
                for row in rows {
                    guard let seq = row.integer(0), let id = row.blob(1).flatMap(SampleID.init(bytes:)),
                        let kind = row.text(2).flatMap(HealthRecordKind.init(rawValue:)), let payload = row.blob(3)
                    else { continue }
                    records.append(OutboxRecord(
                        id: id, kind: kind, payload: payload, enqueuedAt: Date(timeIntervalSince1970: row.double(4) ?? 0)))
                    try connection.run("DELETE FROM dead_letters WHERE seq = ?", [.integer(seq)])
                }
                for first in stride(from: 0, to: records.count, by: Self.upgradeBatchSize) {
                    try Self.insert(
                        NewOutboxBatch(records: Array(records[first..<min(first + Self.upgradeBatchSize, records.count)]), body: nil),
                        id: nil, connection)
                }
                return (records.count, try Self.measure(connection))
            }
            self.cached.withLock { $0 = statistics }
            return moved
        }
    }

    /// Re-reads the sizes from the file (after another process changed it, e.g. the CLI).
    public func refresh() async throws {
        try await database.perform { connection in
            let statistics = try Self.measure(connection)
            self.cached.withLock { $0 = statistics }
        }
    }
}
