import FoundationEssentials

/// Which weighings of one scale were stored: a weighing is repeated in many advertisements
/// (measuring, stabilised, stepped off) and is stored once, whatever order they arrive in.
///
/// A weighing is the scale's clock and its raw weight and unit: the repeats of one weighing
/// carry the same (the load-removed repeats too), a new weighing a later clock. Pure; bounded
/// (the last ``capacity`` weighings); `Codable`, so it survives restarts in the source's
/// checkpoint, committed with the sample.
public struct WeighingLedger: Sendable, Hashable, Codable {
    /// One weighing's identity.
    public struct Weighing: Sendable, Hashable, Codable {
        /// The scale's clock at the weighing.
        public let year, month, day, hour, minute, second: Int
        /// The weight in the scale's steps.
        public let rawWeight: UInt16
        /// The scale's unit (`kg`, `lb`, `jin`).
        public let unit: String

        /// The weighing `reading` belongs to.
        public init(_ reading: MiScaleReading) {
            let clock = reading.clock
            (year, month, day, hour, minute, second) = (clock.year, clock.month, clock.day, clock.hour, clock.minute, clock.second)
            rawWeight = reading.rawWeight
            unit = reading.unit.rawValue
        }
    }

    /// The most weighings remembered per scale.
    public static let capacity = 64
    /// The weighings stored, oldest first.
    public private(set) var stored: [Weighing] = []
    /// The weighings whose impedance was used, oldest first (a body composition scale sends a
    /// stabilised weight first and its impedance seconds later, in repeats of the same weighing).
    /// Optional so that a checkpoint written before it existed still decodes.
    public private(set) var measuredImpedance: [Weighing]?

    /// An empty ledger.
    public init() {}

    /// Whether `reading` is a stabilised weighing not stored yet; if so it is now recorded as
    /// stored. A reading that is not stabilised, or weighs nothing, is never stored.
    public mutating func admit(_ reading: MiScaleReading) -> Bool {
        guard reading.stabilized, reading.rawWeight > 0 else { return false }
        let weighing = Weighing(reading)
        guard !stored.contains(weighing) else { return false }
        stored.append(weighing)
        if stored.count > Self.capacity { stored.removeFirst(stored.count - Self.capacity) }
        return true
    }

    /// Whether `reading` is a stabilised weighing carrying an impedance not used yet; if so it
    /// is now recorded as used. Independent of ``admit(_:)``: the impedance usually arrives in a
    /// later repeat of a weighing already stored.
    public mutating func admitImpedance(_ reading: MiScaleReading) -> Bool {
        guard reading.stabilized, reading.rawWeight > 0, reading.impedance != nil else { return false }
        let weighing = Weighing(reading)
        var measured = measuredImpedance ?? []
        guard !measured.contains(weighing) else { return false }
        measured.append(weighing)
        if measured.count > Self.capacity { measured.removeFirst(measured.count - Self.capacity) }
        measuredImpedance = measured
        return true
    }
}
