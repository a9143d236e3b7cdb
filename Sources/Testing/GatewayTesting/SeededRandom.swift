/// A small deterministic generator (splitmix64), so that a failing run can be repeated: the same
/// seed gives the same sequence on every platform.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    /// The generator's state; the next value is derived from it.
    public var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next value of the sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A whole number in `range`, drawn from this sequence.
    public mutating func next(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// True with `probability` (0 to 1), drawn from this sequence.
    public mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
}
