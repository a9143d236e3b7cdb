public import GatewayRuntime

/// Which Bluetooth stack a Bluetooth LE source uses (its `transport` key).
public enum BLETransportChoice: String, Sendable, Hashable, ConfigurationChoice {
    /// BlueZ over the system D-Bus (the default).
    case bluez
    /// Simulated devices that send real payload bytes (`healthgate demo`).
    case simulated
}
