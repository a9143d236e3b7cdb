import GATTDecoding

/// The time stamp of a health observation: the nine bytes of the Elapsed Time format (the
/// Elapsed Time characteristic's value, which GHS reuses for observation time stamps).
///
/// Kept as sent: flags, a 48-bit counter, the time synchronisation source and the TZ/DST offset.
/// No clock and no calendar: ``secondsSince2000`` and ``offsetMinutes`` are what a caller needs
/// to place the observation on a timeline, and mapping to dates is done elsewhere.
public struct GHSTimestamp: Hashable, Sendable {
    /// The resolution of ``value`` (flags bits 2–3).
    public enum Resolution: UInt8, Hashable, Sendable, CaseIterable {
        case oneSecond = 0
        case hundredMilliseconds = 1
        case oneMillisecond = 2
        case hundredMicroseconds = 3

        /// Units per second: the divisor that turns a count into seconds.
        public var unitsPerSecond: Double {
            switch self {
            case .oneSecond: 1
            case .hundredMilliseconds: 10
            case .oneMillisecond: 1_000
            case .hundredMicroseconds: 10_000
            }
        }

        /// One unit in seconds: 1, 0.1, 0.001 or 0.0001.
        public var seconds: Double { 1 / unitsPerSecond }
    }

    /// The flags octet as sent: bit 0 tick counter (else time of day), bit 1 UTC (else local
    /// time), bits 2–3 ``Resolution``, bit 4 TZ/DST offset used, bit 5 current timeline. Bits
    /// 6–7 are reserved and never set in a decoded time stamp.
    public var flags: UInt8
    /// The counter: units of ``resolution`` since 2000-01-01T00:00:00 (UTC or local, as
    /// ``isUTC`` says) for a time of day, else ticks of a counter with no epoch. 48 bits.
    public var value: UInt64
    /// Where the sensor's clock got its time.
    public var timeSource: GHSTimeSource
    /// The TZ/DST offset in units of 15 minutes, as sent; meaningful only when ``usesOffset``.
    public var offsetQuarterHours: Int8

    /// A time stamp from its parts; `value` is cut to 48 bits when encoded.
    public init(flags: UInt8, value: UInt64, timeSource: GHSTimeSource, offsetQuarterHours: Int8) {
        self.flags = flags
        self.value = value
        self.timeSource = timeSource
        self.offsetQuarterHours = offsetQuarterHours
    }

    /// Whether ``value`` counts ticks rather than the time since 2000.
    public var isTickCounter: Bool { flags & 0x01 != 0 }
    /// Whether the time of day is UTC (else local time).
    public var isUTC: Bool { flags & 0x02 != 0 }
    /// The unit of ``value``.
    public var resolution: Resolution {
        // Two bits select one of four cases, so the initialiser cannot fail.
        Resolution(rawValue: (flags >> 2) & 0x03) ?? .oneSecond
    }
    /// Whether ``offsetQuarterHours`` is used (flags bit 4).
    public var usesOffset: Bool { flags & 0x10 != 0 }
    /// Whether the time stamp is on the sensor's current timeline (flags bit 5): the clock has
    /// not been set since it was taken.
    public var isCurrentTimeline: Bool { flags & 0x20 != 0 }

    /// ``value`` in seconds, whether it counts ticks or time since 2000.
    public var elapsedSeconds: Double {
        // Dividing (not multiplying by 0.001) so that 1500 ms is 1.5 exactly.
        Double(value) / resolution.unitsPerSecond
    }

    /// Seconds since 2000-01-01T00:00:00 in UTC (``isUTC``) or in local time, nil for a tick
    /// counter.
    public var secondsSince2000: Double? { isTickCounter ? nil : elapsedSeconds }

    /// The TZ/DST offset in minutes (local time = UTC + offset), nil when the flags say it is
    /// not used.
    public var offsetMinutes: Int? { usesOffset ? Int(offsetQuarterHours) * 15 : nil }

    /// The nine bytes this time stamp is sent as.
    public var encoded: [UInt8] {
        var bytes = [flags]
        for shift in stride(from: 0, to: 48, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        bytes.append(timeSource.rawValue)
        bytes.append(UInt8(bitPattern: offsetQuarterHours))
        return bytes
    }

    /// Reads the nine bytes; fails with `.reservedValue` on a reserved flag bit (6 or 7).
    static func read(_ reader: inout GATTPayloadReader<GHSCharacteristic>) throws(GHSDecodingError) -> GHSTimestamp {
        let flagsOffset = reader.offset
        let flags = try reader.uint8("timestamp.flags")
        guard flags & 0xC0 == 0 else {
            throw GHSDecodingError(
                .reservedValue, characteristic: reader.characteristic, field: "timestamp.flags", offset: flagsOffset,
                needed: 1, available: reader.remaining + 1, value: Int(flags))
        }
        let value = try reader.uint48("timestamp.value")
        let source = GHSTimeSource(rawValue: try reader.uint8("timestamp.timeSource"))
        let offset = Int8(bitPattern: try reader.uint8("timestamp.offset"))
        return GHSTimestamp(flags: flags, value: value, timeSource: source, offsetQuarterHours: offset)
    }
}

/// The time synchronisation source of a time stamp (the Elapsed Time format's Time Sync Source
/// Type): where the sensor's clock got its time.
public enum GHSTimeSource: Hashable, Sendable {
    case unknown
    case networkTimeProtocol
    case gps
    case radioTimeSignal
    case manual
    case atomicClock
    case cellularNetwork
    case notSynchronized
    /// A value the specification reserves (8–255), kept as sent.
    case reserved(UInt8)

    /// The source for an octet; 8–255 are ``reserved(_:)``.
    public init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .unknown
        case 1: self = .networkTimeProtocol
        case 2: self = .gps
        case 3: self = .radioTimeSignal
        case 4: self = .manual
        case 5: self = .atomicClock
        case 6: self = .cellularNetwork
        case 7: self = .notSynchronized
        default: self = .reserved(rawValue)
        }
    }

    /// The octet as sent.
    public var rawValue: UInt8 {
        switch self {
        case .unknown: 0
        case .networkTimeProtocol: 1
        case .gps: 2
        case .radioTimeSignal: 3
        case .manual: 4
        case .atomicClock: 5
        case .cellularNetwork: 6
        case .notSynchronized: 7
        case .reserved(let value): value
        }
    }

    /// A stable name for JSON and logs: `cellularNetwork`, `reserved8`, ….
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .networkTimeProtocol: "networkTimeProtocol"
        case .gps: "gps"
        case .radioTimeSignal: "radioTimeSignal"
        case .manual: "manual"
        case .atomicClock: "atomicClock"
        case .cellularNetwork: "cellularNetwork"
        case .notSynchronized: "notSynchronized"
        case .reserved(let value): "reserved\(value)"
        }
    }
}
