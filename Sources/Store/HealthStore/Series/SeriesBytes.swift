/// The primitives of the store's series encodings (``QuantitySeriesEncoding``,
/// ``HeartbeatEncoding``): unsigned LEB128 varints, zigzag for signed numbers (as Protocol
/// Buffers write them), and little-endian 64-bit words.
enum SeriesBytes {
    /// Appends `value` as an unsigned LEB128 varint: 7 bits a byte, low bits first.
    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// `value` mapped to an unsigned number, small magnitudes to small numbers (0, -1, 1, -2 → 0, 1, 2, 3).
    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    static func appendWord(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// Reads what the appenders wrote, front to back; every read fails with ``SeriesEncodingError``
    /// rather than trapping on a short or malformed blob. Over an array, or over a blob's bytes
    /// in place (a statement's column), which a reader of many rows must not copy.
    struct Reader<Bytes: RandomAccessCollection<UInt8>> where Bytes.Index == Int {
        let bytes: Bytes
        var position: Int

        init(_ bytes: Bytes) {
            self.bytes = bytes
            position = bytes.startIndex
        }

        var isAtEnd: Bool { position == bytes.endIndex }

        mutating func byte() throws(SeriesEncodingError) -> UInt8 {
            guard position < bytes.endIndex else { throw .truncated }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func varint() throws(SeriesEncodingError) -> UInt64 {
            // One byte, the common case (a steady step, a heart rate's change): no loop.
            if position < bytes.endIndex, bytes[position] < 0x80 {
                defer { position += 1 }
                return UInt64(bytes[position])
            }
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let next = try byte()
                guard shift < 64, shift < 63 || next <= 1 else { throw .malformed("a varint longer than 64 bits") }
                value |= UInt64(next & 0x7F) << shift
                if next < 0x80 { return value }
                shift += 7
            }
        }

        mutating func word() throws(SeriesEncodingError) -> UInt64 {
            guard bytes.endIndex - position >= 8 else { throw .truncated }
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(bytes[position + index]) << UInt64(8 * index) }
            position += 8
            return value
        }
    }
}

/// A stored series blob that cannot be read: the file was damaged or written by hand.
enum SeriesEncodingError: Error, Hashable, Sendable, CustomStringConvertible {
    case truncated
    case malformed(String)

    var description: String {
        switch self {
        case .truncated: "a series blob ends in the middle of a value"
        case .malformed(let what): "a series blob is malformed: \(what)"
        }
    }
}
