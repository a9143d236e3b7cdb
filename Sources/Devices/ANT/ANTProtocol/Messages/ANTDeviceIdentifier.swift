/// One ANT device as healthgate names it: its device type and 20-bit device number, printed
/// `ant:120:863436` (the number in decimal, the way Garmin devices show a sensor's id). It is
/// the local identifier of a strap in samples, status and configuration.
public struct ANTDeviceIdentifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The device type (bits 0–6 of the type byte): 120 for a heart-rate monitor.
    public var deviceType: UInt8
    /// The 20-bit device number (0…1 048 575).
    public var deviceNumber: UInt32

    /// The ANT+ device type of heart-rate monitors.
    public static let heartRateDeviceType: UInt8 = 120

    /// An identifier; the type is cut to 7 bits and the number to 20.
    public init(deviceType: UInt8, deviceNumber: UInt32) {
        self.deviceType = deviceType & 0x7F
        self.deviceNumber = deviceNumber & 0xF_FFFF
    }

    /// Parses `ant:TYPE:NUMBER` (decimal); nil for anything else, out-of-range values included.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "ant", let type = UInt8(parts[1]), type < 128,
            let number = UInt32(parts[2]), number <= 0xF_FFFF
        else { return nil }
        self.init(deviceType: type, deviceNumber: number)
    }

    /// `ant:120:863436`.
    public var description: String { "ant:\(deviceType):\(deviceNumber)" }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.deviceType, lhs.deviceNumber) < (rhs.deviceType, rhs.deviceNumber)
    }
}
