public import GATTDecoding

/// The characteristics of the Bluetooth SIG health profiles this plugin decodes, named in errors
/// and logs.
public enum HealthCharacteristic: String, DecodedCharacteristic, CaseIterable {
    case weightMeasurement
    case bodyCompositionMeasurement
    case bloodPressureMeasurement
    case intermediateCuffPressure
    case temperatureMeasurement
    case glucoseMeasurement
    case glucoseMeasurementContext
    case plxSpotCheckMeasurement
    case plxContinuousMeasurement

    /// The name and assigned number from the GATT Specification Supplement.
    public var displayName: String {
        switch self {
        case .weightMeasurement: "Weight Measurement (0x2A9D)"
        case .bodyCompositionMeasurement: "Body Composition Measurement (0x2A9C)"
        case .bloodPressureMeasurement: "Blood Pressure Measurement (0x2A35)"
        case .intermediateCuffPressure: "Intermediate Cuff Pressure (0x2A36)"
        case .temperatureMeasurement: "Temperature Measurement (0x2A1C)"
        case .glucoseMeasurement: "Glucose Measurement (0x2A18)"
        case .glucoseMeasurementContext: "Glucose Measurement Context (0x2A34)"
        case .plxSpotCheckMeasurement: "PLX Spot-check Measurement (0x2A5E)"
        case .plxContinuousMeasurement: "PLX Continuous Measurement (0x2A5F)"
        }
    }

    /// The 16-bit assigned number.
    public var assignedNumber: UInt16 {
        switch self {
        case .weightMeasurement: 0x2A9D
        case .bodyCompositionMeasurement: 0x2A9C
        case .bloodPressureMeasurement: 0x2A35
        case .intermediateCuffPressure: 0x2A36
        case .temperatureMeasurement: 0x2A1C
        case .glucoseMeasurement: 0x2A18
        case .glucoseMeasurementContext: 0x2A34
        case .plxSpotCheckMeasurement: 0x2A5E
        case .plxContinuousMeasurement: 0x2A5F
        }
    }
}

/// Why a health characteristic's value does not decode.
public typealias HealthDecodingError = CharacteristicDecodingError<HealthCharacteristic>
