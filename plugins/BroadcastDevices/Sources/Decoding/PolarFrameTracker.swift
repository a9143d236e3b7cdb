/// Polar's rule for a new heart-rate value (polar-ble-sdk's `isHrDataUpdated`): the frame
/// counter differs from the previous advertisement's. A strap repeats each value in several
/// advertisements with the same counter; the counter advances (modulo 8) when the value is new.
///
/// A pure value: one per strap, fed every advertisement in arrival order.
public struct PolarFrameTracker: Sendable, Equatable {
    /// The last advertisement's counter; nil before the first, or after ``reset()``.
    public private(set) var previous: UInt8?

    /// A tracker that has seen nothing: the first value is new.
    public init() {}

    /// Whether `block` carries a new value, and remembers its counter.
    public mutating func isNew(_ block: PolarHeartRateBlock) -> Bool {
        defer { previous = block.frameCounter }
        return previous != block.frameCounter
    }

    /// Forgets the counter: the strap was lost (or stopped broadcasting heart rate), so its next
    /// value is new whatever its counter.
    public mutating func reset() { previous = nil }
}
