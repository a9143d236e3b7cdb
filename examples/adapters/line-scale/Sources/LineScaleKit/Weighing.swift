/// One weighing as the scale printed it: `2026-11-30T08:15:02Z ST,GS,+0072.45kg`.
public struct Weighing: Sendable, Hashable {
    /// The scale's `ST`/`US` header: whether the weight had settled.
    public enum Stability: String, Sendable, Hashable {
        /// `ST`: the weight is stable; the only weighings that become readings.
        case stable = "ST"
        /// `US`: the weight is still moving.
        case unstable = "US"
    }

    /// Whether the weight is the whole load or the load less the tare.
    public enum Kind: String, Sendable, Hashable {
        /// `GS`: the gross weight.
        case gross = "GS"
        /// `NT`: the net weight, the tare taken off.
        case net = "NT"
    }

    /// The weight's unit as the scale prints it.
    public enum Unit: String, Sendable, Hashable {
        /// `kg`.
        case kilogram = "kg"
        /// `lb`: the gateway converts it.
        case pound = "lb"
    }

    /// When it was weighed: the line's RFC 3339 date, exactly as written (it is part of the
    /// reading's id, so it is never reformatted).
    public var date: String
    /// Whether the weight had settled.
    public var stability: Stability
    /// Gross or net.
    public var kind: Kind
    /// The weight in ``unit``, signed (a net weight can be below zero).
    public var value: Double
    /// The unit the scale printed.
    public var unit: Unit

    /// A weighing of these parts.
    public init(date: String, stability: Stability, kind: Kind, value: Double, unit: Unit) {
        self.date = date
        self.stability = stability
        self.kind = kind
        self.value = value
        self.unit = unit
    }
}
