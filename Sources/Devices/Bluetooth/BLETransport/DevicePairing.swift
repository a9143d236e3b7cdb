/// How the gateway pairs with a device that requires bonding (many glucose meters, scales and
/// cuffs): set on a device matcher with `"pair": true` (just works) or `"passkey": 123456` (a
/// passkey the device prints or asks for). BlueZ keeps the bond; the gateway keeps nothing and
/// pairs again only when BlueZ reports the device unpaired.
public struct DevicePairing: Sendable, Hashable {
    /// The six-digit passkey to enter, when the device asks for one.
    public var passkey: UInt32?

    /// Passkeys are six decimal digits (Core Specification Vol 3, Part H, §2.3.5.3).
    public static let passkeyRange: ClosedRange<UInt32> = 0...999_999

    public init(passkey: UInt32? = nil) {
        self.passkey = passkey
    }

    /// The passkey as a device shows it, with leading zeros.
    public static func format(_ passkey: UInt32) -> String {
        let digits = String(passkey)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }
}
