public import FoundationEssentials
import HealthModel
public import HealthStore
public import GatewayRuntime
import SQLite

/// The outbox file a remote sink kept before the store became the log every sink follows
/// (`<state directory>/<name>-outbox.sqlite`, outbox schema versions 1 to 5). At the first start
/// of a sink that follows the store, its outbox is imported and removed, losing nothing:
///
/// - every pending record is written into the store (records it holds already change nothing),
///   and the sink's cursor is set just before the earliest of them, so the sink sends them all
///   again (a receiver de-duplicates by uuid) and then everything the store committed after
///   them; an outbox with nothing pending sets the cursor at the store's latest anchor:
///   everything before it had reached the outbox;
/// - every dead letter becomes one of the store's dead letters for the sink;
/// - a record that cannot be decoded is kept as a dead letter with its bytes (status 0).
///
/// Then the file (and its `-wal` and `-shm`) is removed. A failure leaves the file in place and
/// fails the sink's start, which the supervisor retries.
public enum LegacyOutbox {
    /// A pending record or dead letter as the outbox stored it.
    struct Record {
        var id: SampleID
        var kind: HealthRecordKind
        var payload: [UInt8]
    }

    /// A dead letter as the outbox stored it.
    struct Letter {
        var record: Record
        var status: Int
        var response: String
        var failedAt: Date
    }

    /// The outbox file a remote sink named `name` kept in the version before followers:
    /// `<stateDirectory>/<name>-outbox.sqlite`.
    public static func path(stateDirectory: URL, name: String) -> String {
        stateDirectory.appendingPathComponent("\(name)-outbox.sqlite").path
    }

    /// Imports the outbox at `path` into `store` for follower `follower` and removes it; returns
    /// false when there is no such file.
    public static func importIfPresent(
        path: String, into store: HealthStore, follower: String, logger: Logger
    ) async throws -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return false }
        let (pending, dead, version) = try read(path)
        let decoder = HealthJSON.makeDecoder()
        var records: [HealthRecord] = []
        var letters: [DeadLetter] = []
        let now = Date()
        for record in pending {
            if let decoded = try? HealthJSONPayload.decode(record.payload, kind: record.kind, decoder: decoder) {
                records.append(decoded)
            } else {
                letters.append(DeadLetter(
                    follower: follower, id: record.id, kind: record.kind, type: record.kind.rawValue, isDeletion: false,
                    anchor: 0, payload: record.payload, status: 0,
                    response: "imported from \(path): the record cannot be decoded", failedAt: now))
            }
        }
        for letter in dead {
            let type = (try? HealthJSONPayload.decode(letter.record.payload, kind: letter.record.kind, decoder: decoder))
                .map(\.typeIdentifier) ?? letter.record.kind.rawValue
            letters.append(DeadLetter(
                follower: follower, id: letter.record.id, kind: letter.record.kind, type: type, isDeletion: false, anchor: 0,
                payload: letter.record.payload, status: letter.status, response: letter.response, failedAt: letter.failedAt))
        }
        try await store.write(records)
        try await store.addDeadLetters(letters)
        // Resume just before the earliest pending record; after everything when none is pending.
        let anchors = try await store.anchors(of: records.map(\.id))
        let latest = try await store.logBounds().latest
        let resume = anchors.min().map { $0 - 1 } ?? latest
        try await store.skip(follower: follower, to: resume, count: 0)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.removeItem(atPath: path + suffix)
        }
        logger.notice(
            "imported the outbox \(path) (version \(version)): \(String(count: records.count, "pending record")) into the store and "
                + "\(String(count: letters.count, "dead letter")); resuming at anchor \(resume); the file is removed (the store is the log now)")
        return true
    }

    /// The pending records (in delivery order), the dead letters and the schema version.
    static func read(_ path: String) throws -> (pending: [Record], dead: [Letter], version: Int) {
        let connection = try SQLiteConnection(path: path, mode: .readWrite, writeAheadLog: false)
        let version = try connection.userVersion
        let tables = Set(try connection.query("SELECT name FROM sqlite_schema WHERE type = 'table'").compactMap { $0.text(0) })
        var pending: [Record] = []
        if tables.contains("batches") {
            for row in try connection.query("SELECT id, records, body, content_encoding FROM batches ORDER BY id") {
                guard let blob = row.blob(1) else { throw damaged(path, row.integer(0)) }
                let records: [Record]?
                if version >= 5 {
                    var plain: [UInt8]?
                    if RecordIndex.needsBody(blob) {
                        guard let body = row.blob(2) else { throw damaged(path, row.integer(0)) }
                        plain = row.text(3) == "gzip" ? Array(try Gzip.decompress(Data(body))) : body
                    }
                    records = RecordIndex.decode(blob, plainBody: plain)
                } else {
                    records = RecordFraming.decode(blob)
                }
                guard let records else { throw damaged(path, row.integer(0)) }
                pending += records
            }
        }
        if tables.contains("pending") {
            for row in try connection.query("SELECT uuid, kind, payload FROM pending ORDER BY seq") {
                guard let id = row.blob(0).flatMap(SampleID.init(bytes:)),
                    let kind = row.text(1).flatMap(HealthRecordKind.init(rawValue:)), let payload = row.blob(2)
                else { throw damaged(path, nil) }
                pending.append(Record(id: id, kind: kind, payload: payload))
            }
        }
        var dead: [Letter] = []
        if tables.contains("dead_letters") {
            for row in try connection.query("SELECT uuid, kind, payload, failed_at, status, response FROM dead_letters ORDER BY seq") {
                guard let id = row.blob(0).flatMap(SampleID.init(bytes:)),
                    let kind = row.text(1).flatMap(HealthRecordKind.init(rawValue:)), let payload = row.blob(2)
                else { throw damaged(path, nil) }
                dead.append(Letter(
                    record: Record(id: id, kind: kind, payload: payload), status: Int(row.integer(4) ?? 0),
                    response: row.text(5) ?? "", failedAt: Date(timeIntervalSince1970: row.double(3) ?? 0)))
            }
        }
        return (pending, dead, version)
    }

    private static func damaged(_ path: String, _ batch: Int64?) -> SQLiteError {
        SQLiteError(
            .corrupt, message: "the outbox's batch \(batch.map(String.init) ?? "?") is damaged; the file is left in place",
            context: path)
    }

    /// The records blob of outbox schema version 5: byte 0 is 5, byte 1 holds flags (bit 0: the
    /// payloads are in the body; bit 1: one enqueue time for all, written once as an 8-byte
    /// double). Per record: the uuid (16 bytes), the kind (1 byte: quantity, heartbeatSeries,
    /// workout, correlation), the time unless bit 1 is set (8 bytes), the payload's length (4
    /// bytes, little-endian), then its offset in the plain body (4 bytes) or the payload.
    enum RecordIndex {
        static let kinds: [HealthRecordKind] = [.quantity, .heartbeatSeries, .workout, .correlation]

        static func needsBody(_ bytes: [UInt8]) -> Bool { bytes.count >= 2 && bytes[1] & 1 != 0 }

        static func decode(_ bytes: [UInt8], plainBody: [UInt8]?) -> [Record]? {
            guard bytes.count >= 2, bytes[0] == 5 else { return nil }
            let inBody = bytes[1] & 1 != 0
            let oneTime = bytes[1] & 2 != 0
            if inBody && plainBody == nil { return nil }
            var reader = ByteReader(bytes: bytes, index: 2)
            if oneTime { guard reader.integer(8) != nil else { return nil } }
            var records: [Record] = []
            while !reader.atEnd {
                guard let uuid = reader.take(16), let id = SampleID(bytes: uuid), let code = reader.integer(1),
                    Int(code) < kinds.count
                else { return nil }
                if !oneTime { guard reader.integer(8) != nil else { return nil } }
                guard let length = reader.integer(4).map(Int.init) else { return nil }
                let payload: [UInt8]
                if inBody, let plainBody {
                    guard let offset = reader.integer(4).map(Int.init), offset + length <= plainBody.count else { return nil }
                    payload = Array(plainBody[offset..<offset + length])
                } else {
                    guard let inline = reader.take(length) else { return nil }
                    payload = Array(inline)
                }
                records.append(Record(id: id, kind: kinds[Int(code)], payload: payload))
            }
            return records
        }
    }

    /// The records blob of outbox schema versions 3 and 4. Per record: the uuid (16 bytes), the
    /// kind's raw value (1 length byte, then UTF-8), the enqueue time (8 bytes), the payload's
    /// length (4 bytes, little-endian), the payload.
    enum RecordFraming {
        static func decode(_ bytes: [UInt8]) -> [Record]? {
            var reader = ByteReader(bytes: bytes, index: 0)
            var records: [Record] = []
            while !reader.atEnd {
                guard let uuid = reader.take(16), let id = SampleID(bytes: uuid), let length = reader.integer(1),
                    let kindBytes = reader.take(Int(length)),
                    let kind = HealthRecordKind(rawValue: String(decoding: kindBytes, as: UTF8.self)),
                    reader.integer(8) != nil, let size = reader.integer(4), let payload = reader.take(Int(size))
                else { return nil }
                records.append(Record(id: id, kind: kind, payload: Array(payload)))
            }
            return records
        }
    }

    /// Little-endian fields from a byte array.
    struct ByteReader {
        let bytes: [UInt8]
        var index: Int
        var atEnd: Bool { index >= bytes.count }

        mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, bytes.count - index >= count else { return nil }
            defer { index += count }
            return bytes[index..<index + count]
        }

        mutating func integer(_ count: Int) -> UInt64? {
            take(count).map { $0.reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        }
    }
}
