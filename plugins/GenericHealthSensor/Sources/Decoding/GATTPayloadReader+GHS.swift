import GATTDecoding

/// The reads the Generic Health Sensor values need beyond the shared reader's: runs of bytes,
/// 48-bit integers and counted lists, each checked against what remains before anything is
/// allocated, so that a count an attacker chose never sizes a buffer.
extension GATTPayloadReader where Characteristic == GHSCharacteristic {
    /// Fails with `.truncated` naming `field` unless `count` bytes remain.
    func require(_ count: Int, _ field: String) throws(GHSDecodingError) {
        guard count <= remaining else {
            throw GHSDecodingError(
                .truncated, characteristic: characteristic, field: field, offset: offset, needed: count,
                available: max(0, remaining))
        }
    }

    /// Reads `count` bytes as they are.
    mutating func bytes(_ count: Int, _ field: String) throws(GHSDecodingError) -> [UInt8] {
        try require(count, field)
        var run: [UInt8] = []
        run.reserveCapacity(count)
        for _ in 0..<count { run.append(try uint8(field)) }
        return run
    }

    /// Reads an unsigned little-endian 48-bit integer (the Elapsed Time value).
    mutating func uint48(_ field: String) throws(GHSDecodingError) -> UInt64 {
        try require(6, field)
        let low = UInt64(try uint32(field))
        let high = UInt64(try uint16(field))
        return low | high << 32
    }

    /// Reads a uint8 count of items of at least `itemSize` bytes each, refusing with
    /// `.truncated` a count that the bytes left cannot hold.
    mutating func count(_ field: String, itemSize: Int) throws(GHSDecodingError) -> Int {
        let count = Int(try uint8(field))
        try require(count * itemSize, field)
        return count
    }

    /// Reads a uint8 count followed by that many uint32 values (MDC codes, object ids).
    mutating func uint32List(_ field: String) throws(GHSDecodingError) -> [UInt32] {
        let count = try count(field, itemSize: 4)
        var list: [UInt32] = []
        list.reserveCapacity(count)
        for _ in 0..<count { list.append(try uint32(field)) }
        return list
    }
}
