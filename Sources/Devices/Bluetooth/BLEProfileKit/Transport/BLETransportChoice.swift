/// Which Bluetooth stack a Bluetooth LE source uses (its `transport` key).
public enum BLETransportChoice: String, Decodable, Sendable, Hashable, CaseIterable {
    /// BlueZ over the system D-Bus (the default).
    case bluez
    /// Simulated devices that send real payload bytes (`healthgate demo`).
    case simulated
}
