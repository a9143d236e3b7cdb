import FoundationEssentials

/// Builds ACOM observation bytes as a Generic Health Sensor sends them, for the simulated
/// sensors. Independent of the decoders (which the tests check it against): lengths count the
/// bytes after the length field, as STMicroelectronics' sample does.
enum ACOMEncoder {
    /// A header field set (flags bits 0, 1 and 5).
    struct Header {
        var type: UInt32?
        /// Milliseconds since 2000-01-01T00:00:00Z.
        var milliseconds2000: UInt64?
        var patient: UInt8?
    }

    /// One observation: `class`, the length, the flags, the header's fields, then `value`.
    static func object(_ observationClass: UInt8, _ header: Header, value: [UInt8]) -> [UInt8] {
        var flags: UInt16 = 0
        var body: [UInt8] = []
        if let type = header.type {
            flags |= 1 << 0
            body += le(type)
        }
        if let milliseconds = header.milliseconds2000 {
            flags |= 1 << 1
            // UTC (bit 1), 1 ms resolution (bits 2–3 = 2), current timeline (bit 5); NTP; no offset.
            body += [0x2A] + (0..<6).map { UInt8(truncatingIfNeeded: milliseconds >> (8 * UInt64($0))) } + [0x01, 0x00]
        }
        if let patient = header.patient {
            flags |= 1 << 5
            body.append(patient)
        }
        let rest = le(flags) + body + value
        return [observationClass] + le(UInt16(rest.count)) + rest
    }

    /// A numeric observation's value: the unit and a FLOAT.
    static func numeric(unit: UInt16, mantissa: Int, exponent: Int) -> [UInt8] {
        le(unit) + float(mantissa: mantissa, exponent: exponent)
    }

    /// A compound observation's value: numeric components (type, unit, mantissa, exponent).
    static func compound(_ components: [(type: UInt32, unit: UInt16, mantissa: Int, exponent: Int)]) -> [UInt8] {
        [UInt8(components.count)] + components.flatMap { le($0.type) + [0x01] + numeric(unit: $0.unit, mantissa: $0.mantissa, exponent: $0.exponent) }
    }

    /// A bundle: the count, then the members.
    static func bundle(_ members: [[UInt8]]) -> [UInt8] {
        [UInt8(members.count)] + members.flatMap { $0 }
    }

    /// A 32-bit IEEE 11073 FLOAT.
    static func float(mantissa: Int, exponent: Int) -> [UInt8] {
        le(UInt32(truncatingIfNeeded: exponent & 0xFF) << 24 | UInt32(truncatingIfNeeded: mantissa) & 0x00FF_FFFF)
    }

    static func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { GHSEncoding.littleEndian(value) }

    /// `bytes` in segments of `size` bytes, counters from `counter` on; and the next counter.
    static func segments(_ bytes: [UInt8], size: Int, counter: Int) -> (segments: [[UInt8]], next: Int) {
        let segments = GHSSegmentReassembler.segments(of: bytes, payloadSize: size, firstCounter: UInt8(counter & 0x3F))
        return (segments, (counter + segments.count) % 64)
    }
}
