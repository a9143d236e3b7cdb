/// What a Bluetooth device address looks like where healthgate reads one: six colon-separated
/// hex octets, `AA:BB:CC:DD:EE:FF` (a configuration's `devices`, a BlueZ device path, `pair`).
public enum BluetoothAddress {
    /// Whether `text` is six colon-separated hex octets.
    public static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }
}
