public import HealthModel

/// Custom metadata keys this source writes.
extension MetadataKey {
    /// The BLE address the sample came from (string).
    public static let bleAddress: MetadataKey = "healthgate.bleAddress"
    /// The device's battery level in percent when the connection was made (integer).
    public static let batteryLevel: MetadataKey = "healthgate.batteryLevel"
    /// True when the value is an estimate (steps from cadence × time), not a device count.
    public static let estimated: MetadataKey = "healthgate.estimated"
}
