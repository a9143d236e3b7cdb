public import HealthModel

/// Metadata keys every Bluetooth LE source writes.
extension MetadataKey {
    /// The BLE address the sample came from (string).
    public static let bleAddress: MetadataKey = "healthgate.bleAddress"
    /// The device's battery level in percent when the connection was made (integer).
    public static let batteryLevel: MetadataKey = "healthgate.batteryLevel"
}
