public import Foundation
public import HealthModel

/// One record in the outbox: its HealthJSON and when it entered.
public struct OutboxRecord: Sendable, Hashable {
    /// The record's uuid.
    public var id: SampleID
    /// Which member of ``HealthRecord`` the payload encodes.
    public var kind: HealthRecordKind
    /// The record's sample in HealthJSON (the `sample` member of a ``HealthRecord``).
    public var payload: [UInt8]
    /// When the record entered the outbox.
    public var enqueuedAt: Date

    /// A record with its HealthJSON.
    public init(id: SampleID, kind: HealthRecordKind, payload: [UInt8], enqueuedAt: Date) {
        self.id = id
        self.kind = kind
        self.payload = payload
        self.enqueuedAt = enqueuedAt
    }
}

/// A batch's wire form: the bytes sent as they are, on every attempt.
public struct OutboxBody: Sendable, Hashable {
    /// The encoded batch (compressed when `contentEncoding` says so).
    public var bytes: [UInt8]
    /// How `bytes` are compressed (`gzip`), nil when they are not.
    public var contentEncoding: String?
    /// Records that could not be encoded and are not in `bytes`: the outbox dead-letters them.
    public var unusable: [OutboxRecord]
    /// Where each record's payload starts in the body before compression, in the records' order,
    /// when every payload is there byte for byte (the HTTP sink's native body): the outbox then
    /// stores the records' uuids and places instead of their payloads a second time, and reads the
    /// payloads back from the body when it needs them (bisecting, dead letters). Nil otherwise.
    /// Not part of the stored body: a batch read back has nil.
    public var payloadOffsets: [Int]?

    /// A body, with the records left out of it.
    public init(bytes: [UInt8], contentEncoding: String?, unusable: [OutboxRecord] = [], payloadOffsets: [Int]? = nil) {
        self.bytes = bytes
        self.contentEncoding = contentEncoding
        self.unusable = unusable
        self.payloadOffsets = payloadOffsets
    }
}

/// A batch to add to the outbox.
///
/// A *sealed* batch has its body: it is sent as it is, under its key, until acknowledged. An
/// unsealed one (no body) holds records that arrived in a small group; the outbox merges
/// unsealed batches into full ones and seals them before the first attempt
/// (``Outbox/seal(maxRecords:now:encode:)``), so nothing that was ever sent changes its key.
public struct NewOutboxBatch: Sendable {
    /// The batch identity (the HTTP sink's `Idempotency-Key`): ``OutboxBatchKey/key(for:)`` of the records.
    public var key: String
    /// The records, in delivery order.
    public var records: [OutboxRecord]
    /// The wire form, or nil to leave the batch unsealed.
    public var body: OutboxBody?

    /// A batch keyed by its records' uuids.
    public init(records: [OutboxRecord], body: OutboxBody?) {
        self.key = OutboxBatchKey.key(for: records.map(\.id))
        self.records = records
        self.body = body
    }
}

/// A sealed batch read back for sending.
public struct OutboxBatch: Sendable, Hashable {
    /// Its row (delivery order).
    public var id: Int64
    /// The batch identity, the same on every attempt and after every restart.
    public var key: String
    /// How many records it carries.
    public var count: Int
    /// When its oldest record entered the outbox.
    public var enqueuedAt: Date
    /// The wire form.
    public var body: OutboxBody
}

/// The first batch in delivery order.
public struct OutboxHead: Sendable, Hashable {
    /// Its row.
    public var id: Int64
    /// Whether the batch has its body; an unsealed one is merged and sealed before it is sent.
    public var sealed: Bool
    /// The sealed batch, ready to send; nil when it is unsealed.
    public var batch: OutboxBatch?
}

/// Batch identities.
///
/// A batch formed from records gets a deterministic digest of their uuids, so the same records
/// give the same key in any order. The two halves of a bisected batch get the parent's key with
/// `.0` (first half) or `.1` (second half) appended: stable, and never equal to a digest key.
public enum OutboxBatchKey {
    /// Two independent 64-bit FNV-1a digests of the sorted uuids, finalised with splitmix64: a
    /// de-duplication key, not a cryptographic hash.
    public static func key(for ids: [SampleID]) -> String {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        // The 16 bytes of each uuid, most significant first (no array per uuid: the intake keys
        // every batch it takes).
        for id in ids.sorted() {
            for index in 0..<16 {
                let word = index < 8 ? id.high : id.low
                let byte = (word >> UInt64(56 - 8 * (index % 8))) & 0xFF
                first = (first ^ byte) &* 0x0000_0100_0000_01B3
                second = (second ^ (byte ^ 0x5A)) &* 0x0000_0100_0000_01B3
            }
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

    /// The keys of the two halves of the batch keyed `key`.
    public static func halves(of key: String) -> (first: String, second: String) {
        (key + ".0", key + ".1")
    }
}

/// The stored form of a batch's records in outbox schema versions 3 and 4: one blob, so a batch
/// is one row. Version 5 rewrites it as ``OutboxRecordIndex``.
///
/// Per record: the uuid (16 bytes), the kind's raw value (1 length byte, then UTF-8), the enqueue
/// time (IEEE 754 double, seconds since 1970, little-endian), the payload's length (4 bytes,
/// little-endian), the payload.
enum OutboxRecordFraming {
    static func encode(_ records: [OutboxRecord]) -> [UInt8] {
        var size = 0
        for record in records { size += 16 + 1 + 16 + 8 + 4 + record.payload.count }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        for record in records {
            bytes.append(contentsOf: record.id.bytes)
            let kind = Array(record.kind.rawValue.utf8)
            bytes.append(UInt8(truncatingIfNeeded: kind.count))
            bytes.append(contentsOf: kind)
            withUnsafeBytes(of: record.enqueuedAt.timeIntervalSince1970.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: record.payload.count).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: record.payload)
        }
        return bytes
    }

    /// The records, or nil when the blob is not in this form (a damaged row).
    static func decode(_ bytes: [UInt8]) -> [OutboxRecord]? {
        var records: [OutboxRecord] = []
        var index = 0
        func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, bytes.count - index >= count else { return nil }
            defer { index += count }
            return bytes[index..<index + count]
        }
        func littleEndian(_ slice: ArraySlice<UInt8>) -> UInt64 {
            slice.reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        while index < bytes.count {
            guard let uuid = take(16), let id = SampleID(bytes: uuid), let length = take(1), let kindBytes = take(Int(length[length.startIndex])),
                let kind = HealthRecordKind(rawValue: String(decoding: kindBytes, as: UTF8.self)), let time = take(8),
                let size = take(4), let payload = take(Int(littleEndian(size)))
            else { return nil }
            records.append(OutboxRecord(
                id: id, kind: kind, payload: Array(payload),
                enqueuedAt: Date(timeIntervalSince1970: Double(bitPattern: littleEndian(time)))))
        }
        return records
    }
}
