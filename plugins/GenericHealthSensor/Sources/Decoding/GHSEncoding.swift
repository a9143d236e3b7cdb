/// Writes the little-endian fields the gateway sends (GATT values are least significant octet
/// first: Bluetooth Core Specification, Vol 3, Part G).
enum GHSEncoding {
    /// The bytes of `value`, least significant first.
    static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<(T.bitWidth / 8)).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}
