public import GATTDecoding

/// The characteristics this plugin decodes, named in errors and logs.
public enum FitnessCharacteristic: String, DecodedCharacteristic, CaseIterable {
    case cscMeasurement
    case cscFeature
    case cyclingPowerMeasurement
    case cyclingPowerFeature
    case sensorLocation
    case treadmillData
    case indoorBikeData
    case rowerData
    case fitnessMachineFeature
    case fitnessMachineStatus

    /// The name and assigned number from the GATT Specification Supplement.
    public var displayName: String {
        switch self {
        case .cscMeasurement: "CSC Measurement (0x2A5B)"
        case .cscFeature: "CSC Feature (0x2A5C)"
        case .cyclingPowerMeasurement: "Cycling Power Measurement (0x2A63)"
        case .cyclingPowerFeature: "Cycling Power Feature (0x2A65)"
        case .sensorLocation: "Sensor Location (0x2A5D)"
        case .treadmillData: "Treadmill Data (0x2ACD)"
        case .indoorBikeData: "Indoor Bike Data (0x2AD2)"
        case .rowerData: "Rower Data (0x2AD1)"
        case .fitnessMachineFeature: "Fitness Machine Feature (0x2ACC)"
        case .fitnessMachineStatus: "Fitness Machine Status (0x2ADA)"
        }
    }

    /// The 16-bit assigned number.
    public var assignedNumber: UInt16 {
        switch self {
        case .cscMeasurement: 0x2A5B
        case .cscFeature: 0x2A5C
        case .cyclingPowerMeasurement: 0x2A63
        case .cyclingPowerFeature: 0x2A65
        case .sensorLocation: 0x2A5D
        case .treadmillData: 0x2ACD
        case .indoorBikeData: 0x2AD2
        case .rowerData: 0x2AD1
        case .fitnessMachineFeature: 0x2ACC
        case .fitnessMachineStatus: 0x2ADA
        }
    }
}
