/// A maximum and a minimum, as the extreme-value fields of a Cycling Power Measurement send them.
public struct Extremes: Hashable, Sendable {
    /// The largest value in the last revolution.
    public var maximum: Int
    /// The smallest value in the last revolution.
    public var minimum: Int

    /// Creates a pair.
    public init(maximum: Int, minimum: Int) {
        self.maximum = maximum
        self.minimum = minimum
    }
}
