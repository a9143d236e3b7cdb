public import HealthModel

/// Metadata keys every Bluetooth LE source writes.
extension MetadataKey {
    /// The BLE address the sample came from (string).
    public static let bleAddress: MetadataKey = "healthgate.bleAddress"
}
