/// The battery of an ANT+ heart-rate monitor (page 7; common page 82 has the same fields): the
/// level, the voltage (a coarse whole-volt nibble plus a fraction in 1/256 V) and a status.
public struct ANTBatteryStatus: Hashable, Sendable {
    /// The descriptive status (bits 4–6 of byte 3).
    public enum Status: UInt8, Hashable, Sendable {
        /// 0 and 6 are reserved.
        case reserved = 0
        /// New.
        case new = 1
        /// Good.
        case good = 2
        /// OK.
        case ok = 3
        /// Low.
        case low = 4
        /// Critical.
        case critical = 5
        /// Invalid (not sent).
        case invalid = 7

        /// `new`, `good`, `ok`, `low`, `critical`; nil for reserved and invalid.
        public var name: String? {
            switch self {
            case .new: "new"
            case .good: "good"
            case .ok: "ok"
            case .low: "low"
            case .critical: "critical"
            case .reserved, .invalid: nil
            }
        }
    }

    /// The level in percent (0–100), nil when the strap does not send it (0xFF).
    public var level: UInt8?
    /// The fractional voltage byte (1/256 V).
    public var fractionalVoltage: UInt8
    /// The coarse voltage nibble (whole volts; 0x0F = invalid).
    public var coarseVoltage: UInt8
    /// The status.
    public var status: Status

    /// A battery from its fields.
    public init(level: UInt8?, fractionalVoltage: UInt8, coarseVoltage: UInt8, status: Status) {
        self.level = level
        self.fractionalVoltage = fractionalVoltage
        self.coarseVoltage = coarseVoltage & 0x0F
        self.status = status
    }

    /// Decodes bytes 1–3 of page 7.
    init(bytes: ArraySlice<UInt8>) {
        let start = bytes.startIndex
        level = bytes[start] <= 100 ? bytes[start] : nil
        fractionalVoltage = bytes[start + 1]
        coarseVoltage = bytes[start + 2] & 0x0F
        status = Status(rawValue: (bytes[start + 2] >> 4) & 0x07) ?? .reserved
    }

    /// The voltage in volts, nil when the coarse nibble is invalid (0x0F).
    public var voltage: Double? {
        coarseVoltage == 0x0F ? nil : Double(coarseVoltage) + Double(fractionalVoltage) / 256
    }

    /// Bytes 1–3 of page 7.
    public var bytes: [UInt8] {
        [level ?? 0xFF, fractionalVoltage, status.rawValue << 4 | coarseVoltage]
    }
}
