public import GATTDecoding

/// One entry of LE GATT Security Levels (0x2BF5): a security mode and level the sensor requires
/// (Bluetooth Core Specification, Vol 3, Part C, §10.2: mode 1 level 4 is authenticated LE
/// Secure Connections pairing with encryption). Philips' GHS simulator sends 01 04.
public struct GHSSecurityLevel: Hashable, Sendable {
    /// The LE security mode.
    public var mode: UInt8
    /// The level within the mode.
    public var level: UInt8

    /// An entry from its parts.
    public init(mode: UInt8, level: UInt8) {
        self.mode = mode
        self.level = level
    }

    /// Decodes the characteristic's value: one or more (mode, level) pairs.
    /// - Throws: `.truncated` for an empty value, `.oddLength` when the last pair is cut.
    public static func decodeList(_ bytes: [UInt8]) throws(GHSDecodingError) -> [GHSSecurityLevel] {
        guard !bytes.isEmpty else {
            throw GHSDecodingError(.truncated, characteristic: .securityLevels, field: "mode", offset: 0, needed: 2, available: 0)
        }
        guard bytes.count.isMultiple(of: 2) else {
            throw GHSDecodingError(
                .oddLength, characteristic: .securityLevels, field: "level", offset: bytes.count - 1, needed: 2, available: 1)
        }
        return stride(from: 0, to: bytes.count, by: 2).map { GHSSecurityLevel(mode: bytes[$0], level: bytes[$0 + 1]) }
    }
}
