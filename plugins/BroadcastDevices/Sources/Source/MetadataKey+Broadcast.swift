public import HealthModel

/// The metadata keys broadcast sources write.
extension MetadataKey {
    /// Whether the strap had skin contact when it computed the heart rate (Polar status bit 1).
    public static let sensorContact: MetadataKey = "healthgate.sensorContact"
    /// True when the strap says its battery needs replacing or recharging (Polar status bit 0 clear).
    public static let lowBattery: MetadataKey = "healthgate.lowBattery"
    /// The address the advertisement came from.
    public static let advertiserAddress: MetadataKey = "healthgate.bleAddress"
    /// The body composition scale's impedance at the weighing, in ohms.
    public static let impedance: MetadataKey = "healthgate.impedance"
    /// The scale's own clock at the weighing (local time, ISO 8601 without a zone), when set.
    public static let scaleTimestamp: MetadataKey = "healthgate.scaleTimestamp"
    /// The unit the scale displayed (`kg`, `lb`, `jin`).
    public static let scaleUnit: MetadataKey = "healthgate.scaleUnit"
}
