/// The plain-SQL baselines' reader of a quantity series' blob (`quantity_series.quantities`):
/// the store's format (format byte 1, a flags byte whose bit 0 says durations are present, the
/// scale, the count as a LEB128 varint, then per quantity the zigzag varint of the change of the
/// step between starts, the duration as a varint when present, and the zigzag varint of the
/// change of `value × 10^scale`, or with scale 255 the value's 64 bits little-endian), read by
/// hand, as a baseline reads the store's tables by hand rather than through the store.
///
/// The store's own reader is internal to it; the baselines read the same bytes with nothing
/// around them. Every benchmark that uses this compares its answer with the store's, so a change
/// of the format fails the benchmark instead of measuring something else.
struct BaselineSeriesDecoder {
    /// One quantity: µs from the series' start, its duration in µs, its value in the series' unit.
    struct Quantity {
        var offset: Int64
        var duration: Int64
        var value: Double
    }

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// Calls `body` with each quantity of the blob at `bytes` (`count` bytes, as
    /// `sqlite3_column_blob` and `sqlite3_column_bytes` give it), in order, after telling
    /// `announce` how many there are (so that a reader keeping them reserves its array once).
    static func forEach(
        _ blob: UnsafeRawPointer?, count: Int, announce: (Int) -> Void = { _ in }, _ body: (Quantity) -> Void
    ) throws {
        guard let bytes = blob else { throw Malformed(description: "a series without quantities") }
        var position = 0
        func byte() throws -> UInt8 {
            guard position < count else { throw Malformed(description: "a series blob ends early") }
            defer { position += 1 }
            return bytes.load(fromByteOffset: position, as: UInt8.self)
        }
        func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let next = try byte()
                value |= UInt64(next & 0x7F) << shift
                if next < 0x80 { return value }
                shift += 7
                guard shift < 64 else { throw Malformed(description: "a varint longer than 64 bits") }
            }
        }
        func signed() throws -> Int64 {
            let value = try varint()
            return Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
        }
        guard try byte() == 1 else { throw Malformed(description: "an unknown series format") }
        let durations = try byte() & 1 == 1
        let scale = try byte()
        let quantities = try varint()
        guard quantities <= UInt64(count) else { throw Malformed(description: "more quantities than bytes") }
        announce(Int(quantities))
        var divisor = 1.0
        if scale != 255 { for _ in 0..<scale { divisor *= 10 } }
        var offset: Int64 = 0
        var step: Int64 = 0
        var scaled: Int64 = 0
        for index in 0..<quantities {
            if index > 0 {
                step &+= try signed()
                offset &+= step
            }
            let duration = durations ? Int64(bitPattern: try varint()) : 0
            let value: Double
            if scale == 255 {
                var word: UInt64 = 0
                for shift in stride(from: 0, to: 64, by: 8) { word |= UInt64(try byte()) << UInt64(shift) }
                value = Double(bitPattern: word)
            } else {
                scaled &+= try signed()
                value = Double(scaled) / divisor
            }
            body(Quantity(offset: offset, duration: duration, value: value))
        }
        guard position == count else { throw Malformed(description: "bytes after a series' last quantity") }
    }
}
