public import GATTDecoding

/// The characteristics this plugin decodes, named in errors and logs.
public enum GATTCharacteristic: String, DecodedCharacteristic, CaseIterable {
    case heartRateMeasurement
    case rscMeasurement
    case bodySensorLocation
    case batteryLevel

    /// The name and assigned number from the GATT Specification Supplement.
    public var displayName: String {
        switch self {
        case .heartRateMeasurement: "Heart Rate Measurement (0x2A37)"
        case .rscMeasurement: "RSC Measurement (0x2A53)"
        case .bodySensorLocation: "Body Sensor Location (0x2A38)"
        case .batteryLevel: "Battery Level (0x2A19)"
        }
    }
}

/// A heart-rate or foot-pod characteristic value that does not decode.
public typealias GATTDecodingError = CharacteristicDecodingError<GATTCharacteristic>
