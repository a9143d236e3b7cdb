import Foundation
import GatewayTesting
@testable import RemoteOutbox
import HealthModel
import SQLite
import XCTest

/// The batch outbox on real SQLite files: stable keys across reopening, sealing, splitting, and
/// the upgrade of an outbox of single records.
final class OutboxTests: XCTestCase {
    var directory: URL!
    let ids = SampleIDGenerator(seed: 11)
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let limits = OutboxLimits(maxBytes: 1 << 30, maxAge: 1e9, policy: .block)

    override func setUpWithError() throws {
        directory = try TestEnvironment.temporaryDirectory("outbox")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    var path: String { directory.appendingPathComponent("repo-outbox.sqlite").path }

    func records(_ count: Int, at offset: Double = 0) -> [OutboxRecord] {
        (0..<count).map { index in
            OutboxRecord(
                id: ids.next(), kind: .quantity, payload: Array(#"{"n":\#(index)}"#.utf8),
                enqueuedAt: start.addingTimeInterval(offset + Double(index)))
        }
    }

    /// A body that lists the uuids, so tests can see what a body holds.
    @Sendable static func listing(_ records: [OutboxRecord]) -> OutboxBody {
        OutboxBody(bytes: Array(records.map(\.id.uuidString).joined(separator: ",").utf8), contentEncoding: nil)
    }

    func testASealedBatchKeepsItsKeyAndBodyAcrossReopening() async throws {
        let batch = records(3)
        let body = Self.listing(batch)
        _ = try await Outbox(path: path).append([NewOutboxBatch(records: batch, body: body)], now: start, limits: limits)
        let reopened = try Outbox(path: path)
        let head = try await reopened.head()
        XCTAssertEqual(head?.sealed, true)
        let stored = try await reopened.batch(try XCTUnwrap(head?.id))
        XCTAssertEqual(stored?.key, OutboxBatchKey.key(for: batch.map(\.id)))
        XCTAssertEqual(stored?.body, body)
        XCTAssertEqual(stored?.count, 3)
        XCTAssertEqual(head?.batch, stored, "the head carries the sealed batch as batch(_:) reads it")
        let pending = try await reopened.pendingRecords()
        XCTAssertEqual(pending, batch)
        XCTAssertEqual(reopened.statistics.count, 3)
        XCTAssertEqual(reopened.statistics.batches, 1)
    }

    func testSealingMergesSmallBatchesInOrderAndALoneBatchKeepsItsKey() async throws {
        let outbox = try Outbox(path: path)
        let (a, b, c) = (records(2), records(2, at: 10), records(2, at: 20))
        _ = try await outbox.append([NewOutboxBatch(records: a, body: nil)], now: start, limits: limits)
        _ = try await outbox.append([NewOutboxBatch(records: b, body: nil), NewOutboxBatch(records: c, body: nil)], now: start, limits: limits)
        XCTAssertEqual(outbox.statistics.unsealed, 6)
        XCTAssertEqual(outbox.statistics.oldestUnsealed, start)
        let unsealedHead = try await outbox.head()
        XCTAssertEqual(unsealedHead?.sealed, false)
        XCTAssertNil(unsealedHead?.batch, "an unsealed head has no body to send")

        try await outbox.seal(maxRecords: 4, now: start, encode: Self.listing)
        let keys = try await outbox.pendingKeys()
        XCTAssertEqual(keys, [OutboxBatchKey.key(for: (a + b).map(\.id)), OutboxBatchKey.key(for: c.map(\.id))])
        let head = try await outbox.head()
        XCTAssertEqual(head?.sealed, true)
        let merged = try await outbox.batch(try XCTUnwrap(head?.id))
        XCTAssertEqual(merged?.body, Self.listing(a + b))
        XCTAssertEqual(outbox.statistics.unsealed, 2)

        try await outbox.seal(maxRecords: 4, now: start, encode: Self.listing)
        let sealedKeys = try await outbox.pendingKeys()
        XCTAssertEqual(sealedKeys, keys, "sealing a lone batch changed its key")
        XCTAssertEqual(outbox.statistics.unsealed, 0)
        let pending = try await outbox.pendingRecords()
        XCTAssertEqual(pending, a + b + c)
    }

    func testSplittingStoresBothHalvesWithDerivedKeysInOneStep() async throws {
        let outbox = try Outbox(path: path)
        let batch = records(5)
        _ = try await outbox.append([NewOutboxBatch(records: batch, body: Self.listing(batch))], now: start, limits: limits)
        let parentID = try await outbox.head()?.id
        let parent = try await outbox.batch(try XCTUnwrap(parentID))
        let halves = try await outbox.split(try XCTUnwrap(parent), now: start, encode: Self.listing)
        XCTAssertEqual(halves.count, 2)

        let reopened = try Outbox(path: path)
        let key = OutboxBatchKey.key(for: batch.map(\.id))
        let first = try await reopened.batch(halves[0])
        let second = try await reopened.batch(halves[1])
        XCTAssertEqual(first?.key, key + ".0")
        XCTAssertEqual(second?.key, key + ".1")
        XCTAssertEqual(first?.body, Self.listing(Array(batch[..<2])))
        XCTAssertEqual(second?.body, Self.listing(Array(batch[2...])))
        XCTAssertEqual(reopened.statistics.count, 5)
        let keys = try await reopened.pendingKeys()
        XCTAssertEqual(keys, [key + ".0", key + ".1"])
    }

    func testAnAcknowledgedBatchIsRemovedAndADeadLetterCanComeBack() async throws {
        let outbox = try Outbox(path: path)
        let (kept, refused) = (records(3), records(1, at: 10))
        _ = try await outbox.append(
            [NewOutboxBatch(records: kept, body: Self.listing(kept)), NewOutboxBatch(records: refused, body: Self.listing(refused))],
            now: start, limits: limits)
        let first = try await outbox.head()
        try await outbox.remove(try XCTUnwrap(first).id)
        XCTAssertEqual(outbox.statistics.count, 1)
        let last = try await outbox.head()
        try await outbox.deadLetter(try XCTUnwrap(last).id, status: 422, response: "bad", now: start)
        XCTAssertEqual(outbox.statistics.count, 0)
        XCTAssertEqual(outbox.statistics.deadLetters, 1)
        let letters = try await outbox.deadLetters()
        XCTAssertEqual(letters.map(\.id), refused.map(\.id))
        let moved = try await outbox.retryDeadLetters()
        XCTAssertEqual(moved, 1)
        XCTAssertEqual(outbox.statistics.unsealed, 1, "a retried dead letter waits to be sealed in the sink's format")
        let pending = try await outbox.pendingRecords()
        XCTAssertEqual(pending, refused)
    }

    /// An outbox written by the single-record format (schema version 2) is upgraded: its
    /// pending records become unsealed batches, its dead letters stay.
    func testAnOutboxOfSingleRecordsIsUpgradedNotLost() async throws {
        let old = records(3)
        let connection = try SQLiteConnection(path: path)
        try connection.execute("""
            CREATE TABLE pending(seq INTEGER PRIMARY KEY AUTOINCREMENT, uuid BLOB NOT NULL UNIQUE, kind TEXT NOT NULL,
                payload BLOB NOT NULL, bytes INTEGER NOT NULL, enqueued_at REAL NOT NULL);
            CREATE TABLE dead_letters(seq INTEGER PRIMARY KEY, uuid BLOB NOT NULL UNIQUE, kind TEXT NOT NULL,
                payload BLOB NOT NULL, bytes INTEGER NOT NULL, enqueued_at REAL NOT NULL, failed_at REAL NOT NULL,
                status INTEGER NOT NULL, response TEXT NOT NULL);
            CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL);
            CREATE INDEX pending_by_age ON pending(enqueued_at);
            PRAGMA user_version = 2;
            """)
        for record in old {
            try connection.run(
                "INSERT INTO pending(uuid, kind, payload, bytes, enqueued_at) VALUES (?, ?, ?, ?, ?)",
                [.blob(record.id.bytes), .text("quantity"), .blob(record.payload), .integer(Int64(record.payload.count)),
                 .real(record.enqueuedAt.timeIntervalSince1970)])
        }
        let dead = ids.next()
        try connection.run(
            "INSERT INTO dead_letters(seq, uuid, kind, payload, bytes, enqueued_at, failed_at, status, response) "
                + "VALUES (1, ?, 'quantity', ?, 2, 0, 0, 400, 'no')", [.blob(dead.bytes), .blob(Array("{}".utf8))])

        let outbox = try Outbox(path: path)
        XCTAssertEqual(outbox.statistics.count, 3)
        XCTAssertEqual(outbox.statistics.unsealed, 3)
        let pending = try await outbox.pendingRecords()
        XCTAssertEqual(pending, old)
        let letters = try await outbox.deadLetters()
        XCTAssertEqual(letters.map(\.id), [dead])
        XCTAssertEqual(try connection.userVersion, 5)
    }

    /// The totals read after every append and removal come from the covering index, not from
    /// the batches' rows (whose first pages are mostly blob).
    func testTheTotalsAreReadFromTheCoveringIndex() async throws {
        let outbox = try Outbox(path: path)
        _ = try await outbox.append([NewOutboxBatch(records: records(3), body: nil)], now: start, limits: limits)
        let connection = try SQLiteConnection(path: path)
        let plan = try connection.query("EXPLAIN QUERY PLAN " + Outbox.totalsQuery).compactMap { $0.text(3) }
        XCTAssertEqual(plan, ["SCAN batches USING COVERING INDEX batches_totals"])
        XCTAssertEqual(outbox.statistics.count, 3)
    }

    /// A body that carries each record's payload verbatim (as the HTTP sink's native body does),
    /// gzip-compressed, with the offsets: `[p0,p1,…]`.
    @Sendable static func carrying(_ records: [OutboxRecord]) -> OutboxBody {
        var plain: [UInt8] = [UInt8(ascii: "[")]
        var offsets: [Int] = []
        for record in records {
            if plain.count > 1 { plain.append(UInt8(ascii: ",")) }
            offsets.append(plain.count)
            plain += record.payload
        }
        plain.append(UInt8(ascii: "]"))
        // The test's own compression; a failure leaves the body plain, which the outbox reads too.
        if let compressed = try? Gzip.compress(Data(plain)) {
            return OutboxBody(bytes: Array(compressed), contentEncoding: "gzip", payloadOffsets: offsets)
        }
        return OutboxBody(bytes: plain, contentEncoding: nil, payloadOffsets: offsets)
    }

    /// When the body carries the payloads, the batch's row stores them once (in the body): the
    /// records come back from the decompressed body, for reading, splitting and dead letters,
    /// across reopening.
    func testPayloadsCarriedByTheBodyAreStoredOnceAndReadBackFromIt() async throws {
        let batch = (0..<40).map { index in
            OutboxRecord(
                id: ids.next(), kind: index % 5 == 0 ? .correlation : .quantity,
                payload: Array(#"{"value":\#(index),"padding":"\#(String(repeating: "x", count: 200))"}"#.utf8),
                enqueuedAt: start)
        }
        let body = Self.carrying(batch)
        XCTAssertEqual(body.contentEncoding, "gzip")
        let outbox = try Outbox(path: path)
        _ = try await outbox.append([NewOutboxBatch(records: batch, body: body)], now: start, limits: limits)
        let payloadBytes = batch.reduce(0) { $0 + $1.payload.count }
        XCTAssertEqual(outbox.statistics.bytes, payloadBytes, "maxBytes counts the records' HealthJSON, wherever it is stored")

        let connection = try SQLiteConnection(path: path)
        let stored = try XCTUnwrap(try connection.query("SELECT length(records) FROM batches").first?.integer(0))
        XCTAssertLessThan(Int(stored), payloadBytes / 4, "the payloads were stored beside the body")

        let reopened = try Outbox(path: path)
        let pending = try await reopened.pendingRecords()
        XCTAssertEqual(pending, batch)
        let parentHead = try await reopened.head()
        let parentID = try XCTUnwrap(parentHead?.id)
        let inBatch = try await reopened.records(of: parentID)
        XCTAssertEqual(inBatch, batch)
        let parentBatch = try await reopened.batch(parentID)
        let parent = try XCTUnwrap(parentBatch)
        XCTAssertNil(parent.body.payloadOffsets)
        let halves = try await reopened.split(parent, now: start, encode: Self.carrying)
        XCTAssertEqual(halves.count, 2)
        let first = try await reopened.records(of: halves[0])
        let second = try await reopened.records(of: halves[1])
        XCTAssertEqual(first, Array(batch[..<20]))
        XCTAssertEqual(second, Array(batch[20...]))
        try await reopened.deadLetter(halves[1], status: 422, response: "no", now: start)
        let letters = try await reopened.deadLetters()
        XCTAssertEqual(letters.map(\.id), batch[20...].map(\.id))
        XCTAssertEqual(letters.map(\.payload), batch[20...].map { String(decoding: $0.payload, as: UTF8.self) })
        XCTAssertEqual(letters.map(\.kind), batch[20...].map(\.kind))
    }

    /// Records that entered at different times keep each its own time in the index.
    func testRecordsOfDifferentTimesKeepTheirTimes() async throws {
        let batch = records(4)
        let outbox = try Outbox(path: path)
        _ = try await outbox.append([NewOutboxBatch(records: batch, body: Self.carrying(batch))], now: start, limits: limits)
        let pending = try await outbox.pendingRecords()
        XCTAssertEqual(pending.map(\.enqueuedAt), batch.map(\.enqueuedAt))
        XCTAssertEqual(outbox.statistics.oldest, start)
    }

    /// An outbox of schema version 4 (batches whose records blob holds the payloads) is upgraded
    /// to version 5 in place: the same batches, keys, bodies and records.
    func testAVersion4OutboxIsUpgradedWithItsBatches() async throws {
        let (sealed, unsealed) = (records(3), records(2, at: 10))
        let connection = try SQLiteConnection(path: path)
        try connection.migrate(Array(Outbox.schema.prefix(4)))
        XCTAssertEqual(try connection.userVersion, 4)
        let body = Self.listing(sealed)
        for (batch, body) in [(sealed, Optional(body)), (unsealed, nil)] {
            try connection.run(
                "INSERT INTO batches(key, count, bytes, enqueued_at, sealed, content_encoding, records, body) "
                    + "VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
                [
                    .text(OutboxBatchKey.key(for: batch.map(\.id))), .integer(Int64(batch.count)),
                    .integer(Int64(batch.reduce(0) { $0 + $1.payload.count })),
                    .real(batch[0].enqueuedAt.timeIntervalSince1970), .integer(body == nil ? 0 : 1),
                    .blob(OutboxRecordFraming.encode(batch)), body.map { .blob($0.bytes) } ?? .null,
                ])
        }

        let outbox = try Outbox(path: path)
        XCTAssertEqual(try connection.userVersion, 5)
        XCTAssertEqual(outbox.statistics.count, 5)
        XCTAssertEqual(outbox.statistics.unsealed, 2)
        let pending = try await outbox.pendingRecords()
        XCTAssertEqual(pending, sealed + unsealed)
        let keys = try await outbox.pendingKeys()
        XCTAssertEqual(keys, [OutboxBatchKey.key(for: sealed.map(\.id)), OutboxBatchKey.key(for: unsealed.map(\.id))])
        let head = try await outbox.head()
        let stored = try await outbox.batch(try XCTUnwrap(head).id)
        XCTAssertEqual(stored?.body, body)
    }

    /// The key is the digest it always was (keys of batches stored by an older build stay what
    /// a new build computes for the same records): checked against the digest written out
    /// byte by byte.
    func testTheBatchKeyIsTheDigestOfTheSortedUUIDBytes() {
        func reference(_ ids: [SampleID]) -> String {
            var first: UInt64 = 0xcbf2_9ce4_8422_2325
            var second: UInt64 = 0x8422_2325_cbf2_9ce4
            for byte in ids.sorted().flatMap(\.bytes) {
                first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                second = (second ^ (UInt64(byte) ^ 0x5A)) &* 0x0000_0100_0000_01B3
            }
            func mix(_ value: UInt64) -> UInt64 {
                var z = value &+ 0x9E37_79B9_7F4A_7C15
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
            func hex(_ value: UInt64) -> String {
                let text = String(value, radix: 16)
                return String(repeating: "0", count: 16 - text.count) + text
            }
            return "hg1-" + hex(mix(first ^ UInt64(ids.count))) + hex(mix(second))
        }
        for count in [0, 1, 2, 7, 500] {
            let batch = (0..<count).map { _ in ids.next() }
            XCTAssertEqual(OutboxBatchKey.key(for: batch), reference(batch))
            XCTAssertEqual(OutboxBatchKey.key(for: batch.reversed()), reference(batch))
        }
        XCTAssertEqual(OutboxBatchKey.key(for: [SampleID(high: 1, low: 2)]).count, 36)
    }
}
