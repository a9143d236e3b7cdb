/// The wire format of one field: its width in octets and whether it is signed.
public struct FieldFormat: Hashable, Sendable {
    /// Octets on the wire.
    public var width: Int
    /// Two's complement when true.
    public var isSigned: Bool

    /// One octet, unsigned.
    public static let uint8 = FieldFormat(width: 1, isSigned: false)
    /// Two octets, unsigned.
    public static let uint16 = FieldFormat(width: 2, isSigned: false)
    /// Two octets, two's complement.
    public static let sint16 = FieldFormat(width: 2, isSigned: true)
    /// Three octets, unsigned (distances).
    public static let uint24 = FieldFormat(width: 3, isSigned: false)
}
