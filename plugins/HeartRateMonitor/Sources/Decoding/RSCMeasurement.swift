public import GATTDecoding
/// One RSC Measurement (0x2A53) notification from a running foot pod, decoded.
///
/// Layout from the Running Speed and Cadence Service v1.0 and the GATT Specification Supplement
/// §3.182: flags (bit 0 stride length present, bit 1 total distance present, bit 2 running),
/// instantaneous speed (uint16, 1/256 m/s), instantaneous cadence (uint8, 1/min), then the
/// optional stride length (uint16, 1/100 m) and total distance (uint32, 1/10 m).
public struct RSCMeasurement: Hashable, Sendable {
    /// Speed in the raw unit, 1/256 m/s.
    public var speedRaw: UInt16
    /// Steps per minute.
    public var instantaneousCadence: Int
    /// Stride length in the raw unit, 1/100 m; nil when absent.
    public var strideLengthRaw: UInt16?
    /// Total distance in the raw unit, 1/10 m; nil when absent. Wraps at 2^32.
    public var totalDistanceRaw: UInt32?
    /// Flags bit 2: running (true) or walking (false).
    public var isRunning: Bool

    /// Creates a measurement from raw field values.
    public init(speedRaw: UInt16, instantaneousCadence: Int, strideLengthRaw: UInt16?, totalDistanceRaw: UInt32?, isRunning: Bool) {
        self.speedRaw = speedRaw
        self.instantaneousCadence = instantaneousCadence
        self.strideLengthRaw = strideLengthRaw
        self.totalDistanceRaw = totalDistanceRaw
        self.isRunning = isRunning
    }

    /// Instantaneous speed in m/s.
    public var instantaneousSpeed: Double { Double(speedRaw) / 256 }
    /// Stride length in metres.
    public var strideLength: Double? { strideLengthRaw.map { Double($0) / 100 } }
    /// Total distance in metres.
    public var totalDistance: Double? { totalDistanceRaw.map { Double($0) / 10 } }
}

/// Decodes RSC Measurement payloads. Pure; never allocates.
public enum RSCMeasurementDecoder {
    /// Decodes one payload. Bytes after the announced fields are ignored (reserved for future
    /// use, and a larger MTU is fine).
    /// - Throws: ``GATTDecodingError`` `.truncated` naming the cut field.
    public static func decode(_ payload: [UInt8]) throws(GATTDecodingError) -> RSCMeasurement {
        let count = payload.count
        func cut(_ field: String, _ offset: Int, _ needs: Int) -> GATTDecodingError {
            GATTDecodingError(
                .truncated, characteristic: .rscMeasurement, field: field, offset: offset, needed: needs,
                available: max(0, count - offset))
        }
        guard count >= 1 else { throw cut("flags", 0, 1) }
        let flags = payload[0]
        guard count >= 3 else { throw cut("instantaneousSpeed", 1, 2) }
        let speed = UInt16(payload[1]) | UInt16(payload[2]) << 8
        guard count >= 4 else { throw cut("instantaneousCadence", 3, 1) }
        let cadence = Int(payload[3])
        var offset = 4
        var stride: UInt16?
        if flags & 0x01 != 0 {
            guard count >= offset + 2 else { throw cut("strideLength", offset, 2) }
            stride = UInt16(payload[offset]) | UInt16(payload[offset + 1]) << 8
            offset += 2
        }
        var distance: UInt32?
        if flags & 0x02 != 0 {
            guard count >= offset + 4 else { throw cut("totalDistance", offset, 4) }
            distance = UInt32(payload[offset]) | UInt32(payload[offset + 1]) << 8
                | UInt32(payload[offset + 2]) << 16 | UInt32(payload[offset + 3]) << 24
        }
        return RSCMeasurement(
            speedRaw: speed, instantaneousCadence: cadence, strideLengthRaw: stride,
            totalDistanceRaw: distance, isRunning: flags & 0x04 != 0)
    }
}
