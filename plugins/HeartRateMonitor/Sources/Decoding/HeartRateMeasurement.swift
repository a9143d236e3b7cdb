public import GATTDecoding
/// The sensor-contact feature of a Heart Rate Measurement (flags bits 1–2).
public enum SensorContact: String, Hashable, Sendable, Codable, CaseIterable {
    /// Bit 2 clear: the sensor cannot tell whether it touches the skin.
    case notSupported
    /// Bits 2 set, 1 clear: supported, and there is no contact (poor or none).
    case notDetected
    /// Bits 2 and 1 set: supported, and the sensor touches the skin.
    case detected
}

/// One Heart Rate Measurement (0x2A37) notification, decoded.
///
/// Field layout from the Heart Rate Service specification v1.0 §3.1 and the GATT Specification
/// Supplement §3.113: a flags octet, then the heart rate (uint8, or uint16 when flags bit 0 is
/// set), then Energy Expended (uint16 kJ, when bit 3 is set), then RR-Intervals (uint16 in
/// 1/1024 s, oldest first, when bit 4 is set; their count is implied by the remaining length).
public struct HeartRateMeasurement: Hashable, Sendable {
    /// Beats per minute, as sent (0 is possible and means "no reading").
    public var heartRate: Int
    /// Flags bits 1–2.
    public var sensorContact: SensorContact
    /// Energy expended since the last reset, in kJ; nil when the field is absent.
    /// 0xFFFF means the counter saturated (see ``isEnergyExpendedSaturated``).
    public var energyExpended: Int?
    /// RR intervals in the spec's raw unit, 1/1024 s, oldest first.
    public var rrIntervals: RRIntervals

    /// Creates a measurement from decoded values.
    public init(heartRate: Int, sensorContact: SensorContact, energyExpended: Int?, rrIntervals: RRIntervals) {
        self.heartRate = heartRate
        self.sensorContact = sensorContact
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
    }

    /// The RR intervals in seconds.
    public var rrIntervalsSeconds: [Double] { rrIntervals.map { Double($0) / 1024 } }

    /// Whether Energy Expended reached its maximum, 0xFFFF kJ: the spec says the sensor stays
    /// there until the client writes "Reset Energy Expended" to the Control Point (§3.1.1.3).
    public var isEnergyExpendedSaturated: Bool { energyExpended == 0xFFFF }
}

/// Decodes Heart Rate Measurement payloads. Pure: no I/O, no clock; allocation-free for payloads
/// of up to 12 RR intervals (see ``RRIntervals``).
public enum HeartRateMeasurementDecoder {
    /// Flags bits (Heart Rate Service §3.1.1.1).
    @usableFromInline static let heartRateIsUInt16: UInt8 = 0x01
    @usableFromInline static let contactDetectedBit: UInt8 = 0x02
    @usableFromInline static let contactSupportedBit: UInt8 = 0x04
    @usableFromInline static let energyExpendedPresent: UInt8 = 0x08
    @usableFromInline static let rrIntervalsPresent: UInt8 = 0x10

    /// Decodes one payload. Bytes beyond the fields the flags announce are RR intervals when
    /// bit 4 is set and are ignored otherwise, so payloads longer than 20 bytes (larger ATT MTU)
    /// are fine.
    /// - Throws: ``GATTDecodingError`` `.truncated` naming the cut field (an RR flag with no
    ///   interval counts as a cut `rrIntervals` field), or `.oddLength` for a half interval.
    @inlinable
    public static func decode(_ payload: [UInt8]) throws(GATTDecodingError) -> HeartRateMeasurement {
        try payload.withUnsafeBytes { decodeResult($0) }.get()
    }

    /// Decodes one payload from raw memory; see ``decode(_:)-([UInt8])``.
    @inlinable
    public static func decode(_ payload: UnsafeRawBufferPointer) throws(GATTDecodingError) -> HeartRateMeasurement {
        try decodeResult(payload).get()
    }

    /// The decoding outcome as a value, for callers that keep per-frame results.
    @inlinable
    public static func decodeResult(_ bytes: UnsafeRawBufferPointer) -> Result<HeartRateMeasurement, GATTDecodingError> {
        let count = bytes.count
        func cut(_ field: String, at offset: Int, needs: Int) -> Result<HeartRateMeasurement, GATTDecodingError> {
            .failure(GATTDecodingError(
                .truncated, characteristic: .heartRateMeasurement, field: field, offset: offset,
                needed: needs, available: max(0, count - offset)))
        }
        guard count >= 1 else { return cut("flags", at: 0, needs: 1) }
        let flags = bytes[0]
        var offset = 1
        let heartRate: Int
        if flags & heartRateIsUInt16 != 0 {
            guard count >= offset + 2 else { return cut("heartRate", at: offset, needs: 2) }
            heartRate = Int(UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8)
            offset += 2
        } else {
            guard count >= offset + 1 else { return cut("heartRate", at: offset, needs: 1) }
            heartRate = Int(bytes[offset])
            offset += 1
        }
        // Bits 1–2: 0b00 and 0b01 both mean "not supported" (the status bit is meaningless
        // without the support bit), 0b10 supported but no contact, 0b11 contact.
        let contact: SensorContact =
            flags & contactSupportedBit == 0
            ? .notSupported : (flags & contactDetectedBit != 0 ? .detected : .notDetected)
        var energy: Int?
        if flags & energyExpendedPresent != 0 {
            guard count >= offset + 2 else { return cut("energyExpended", at: offset, needs: 2) }
            energy = Int(UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8)
            offset += 2
        }
        var intervals = RRIntervals()
        if flags & rrIntervalsPresent != 0 {
            let remaining = count - offset
            guard remaining >= 2 else { return cut("rrIntervals", at: offset, needs: 2) }
            if remaining % 2 != 0 {
                return .failure(GATTDecodingError(
                    .oddLength, characteristic: .heartRateMeasurement, field: "rrIntervals",
                    offset: count - 1, needed: 2, available: 1))
            }
            while offset + 1 < count {
                intervals.append(UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8)
                offset += 2
            }
        }
        return .success(HeartRateMeasurement(
            heartRate: heartRate, sensorContact: contact, energyExpended: energy, rrIntervals: intervals))
    }
}
