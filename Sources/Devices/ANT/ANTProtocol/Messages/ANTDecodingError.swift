/// A frame whose payload does not fit its message id, or an ANT+ page that is not 8 bytes.
public struct ANTDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was being decoded: `broadcast data (0x4E)`, `heart-rate page`.
    public var what: String
    /// The bytes it needs (at least).
    public var expected: Int
    /// The bytes it got.
    public var actual: Int

    /// An error for `what`, which needed `expected` bytes and got `actual`.
    public init(what: String, expected: Int, actual: Int) {
        self.what = what
        self.expected = expected
        self.actual = actual
    }

    public var description: String {
        "\(what): expected \(expected) bytes, got \(actual)"
    }
}
