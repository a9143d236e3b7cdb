import Foundation
import HealthModel

/// The stored form of a batch's records from outbox schema version 5 on: one blob per batch, and
/// no payload stored twice.
///
/// When the sink says where each record's payload sits in the batch's plain (uncompressed) body
/// (``OutboxBody/payloadOffsets``), the blob holds only each record's uuid, kind, length and
/// offset: the payloads are read back from the body, decompressed, when a batch is bisected or
/// dead-lettered. A batch of 500 heart rates then writes about 12 KB of index beside its 14 KB
/// gzip body instead of 160 KB of HealthJSON. Otherwise (unsealed batches, bodies that do not
/// carry the payloads verbatim, such as FHIR or a batch's MQTT messages) the payloads stay in
/// the blob.
///
/// Layout: byte 0 is 5 (the schema version that introduced it); byte 1 holds flags (bit 0: the
/// payloads are in the body; bit 1: every record entered at the same time, written once); then,
/// when bit 1 is set, that time (IEEE 754 double, seconds since 1970, little-endian). Per record:
/// the uuid (16 bytes), the kind (1 byte, ``kinds``), the enqueue time unless bit 1 is set (8
/// bytes), the payload's length (4 bytes, little-endian), then either the payload's offset in
/// the plain body (4 bytes, little-endian) or the payload.
enum OutboxRecordIndex {
    static let layout: UInt8 = 5
    static let payloadsInBody: UInt8 = 1
    static let oneTime: UInt8 = 2
    /// The kind byte: the position in this list. New kinds are appended.
    static let kinds: [HealthRecordKind] = [.quantity, .heartbeatSeries, .workout, .correlation]

    /// The blob for `records`; `offsets[i]` is where `records[i]`'s payload starts in the plain
    /// body, nil to store the payloads themselves.
    static func encode(_ records: [OutboxRecord], offsets: [Int]?) -> [UInt8] {
        let inBody = offsets.map { $0.count == records.count } ?? false
        let time = records.first?.enqueuedAt.timeIntervalSince1970 ?? 0
        let sameTime = records.allSatisfy { $0.enqueuedAt.timeIntervalSince1970.bitPattern == time.bitPattern }
        var size = 2 + 8
        for record in records { size += 16 + 1 + 8 + 4 + (inBody ? 4 : record.payload.count) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        bytes.append(layout)
        bytes.append((inBody ? payloadsInBody : 0) | (sameTime ? oneTime : 0))
        if sameTime { append(time.bitPattern, to: &bytes) }
        for (index, record) in records.enumerated() {
            // The uuid's 16 bytes, big-endian (`SampleID.bytes`, without its arrays).
            withUnsafeBytes(of: record.id.high.bigEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: record.id.low.bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(UInt8(truncatingIfNeeded: kinds.firstIndex(of: record.kind) ?? 0))
            if !sameTime { append(record.enqueuedAt.timeIntervalSince1970.bitPattern, to: &bytes) }
            append(UInt32(truncatingIfNeeded: record.payload.count), to: &bytes)
            if let offsets, inBody {
                append(UInt32(truncatingIfNeeded: offsets[index]), to: &bytes)
            } else {
                bytes.append(contentsOf: record.payload)
            }
        }
        return bytes
    }

    /// Whether the blob's payloads are in the body (then ``decode(_:plainBody:)`` needs it).
    static func needsBody(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 2 && bytes[1] & payloadsInBody != 0
    }

    /// The records, or nil when the blob is not in this layout, or its payloads are in the body
    /// and `plainBody` is nil or does not hold them (a damaged row).
    static func decode(_ bytes: [UInt8], plainBody: [UInt8]?) -> [OutboxRecord]? {
        guard bytes.count >= 2, bytes[0] == layout else { return nil }
        let inBody = bytes[1] & payloadsInBody != 0
        if inBody && plainBody == nil { return nil }
        var index = 2
        func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, bytes.count - index >= count else { return nil }
            defer { index += count }
            return bytes[index..<index + count]
        }
        func integer(_ count: Int) -> UInt64? {
            take(count).map { $0.reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        }
        var sharedTime: Double?
        if bytes[1] & oneTime != 0 {
            guard let bits = integer(8) else { return nil }
            sharedTime = Double(bitPattern: bits)
        }
        var records: [OutboxRecord] = []
        while index < bytes.count {
            guard let uuid = take(16), let id = SampleID(bytes: uuid), let code = take(1).map({ Int($0[$0.startIndex]) }),
                code < kinds.count, let time = sharedTime ?? integer(8).map({ Double(bitPattern: $0) }),
                let length = integer(4).map(Int.init)
            else { return nil }
            let payload: [UInt8]
            if inBody, let plainBody {
                guard let offset = integer(4).map(Int.init), offset + length <= plainBody.count else { return nil }
                payload = Array(plainBody[offset..<offset + length])
            } else {
                guard let inline = take(length) else { return nil }
                payload = Array(inline)
            }
            records.append(OutboxRecord(id: id, kind: kinds[code], payload: payload, enqueuedAt: Date(timeIntervalSince1970: time)))
        }
        return records
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
