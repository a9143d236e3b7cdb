public import HealthModel

/// Custom metadata keys this source writes (besides the Bluetooth ones in BLEProfileKit).
extension MetadataKey {
    /// True when the value is an estimate (steps from cadence × time), not a device count.
    public static let estimated: MetadataKey = "healthgate.estimated"
}
