public import BLETransport
public import GATTDecoding

/// The characteristics of the Continuous Glucose Monitoring Service (CGMS 1.0.1, 0x181F) this
/// plugin decodes, named in errors and logs.
public enum CGMCharacteristic: String, DecodedCharacteristic, CaseIterable {
    case measurement
    case feature
    case status
    case sessionStartTime
    case sessionRunTime
    case recordAccessControlPoint
    case specificOpsControlPoint

    /// The name and assigned number from the GATT Specification Supplement.
    public var displayName: String {
        switch self {
        case .measurement: "CGM Measurement (0x2AA7)"
        case .feature: "CGM Feature (0x2AA8)"
        case .status: "CGM Status (0x2AA9)"
        case .sessionStartTime: "CGM Session Start Time (0x2AAA)"
        case .sessionRunTime: "CGM Session Run Time (0x2AAB)"
        case .recordAccessControlPoint: "Record Access Control Point (0x2A52)"
        case .specificOpsControlPoint: "CGM Specific Ops Control Point (0x2AAC)"
        }
    }

    /// The 16-bit assigned number.
    public var uuid: BluetoothUUID {
        switch self {
        case .measurement: BluetoothUUID(0x2AA7)
        case .feature: BluetoothUUID(0x2AA8)
        case .status: BluetoothUUID(0x2AA9)
        case .sessionStartTime: BluetoothUUID(0x2AAA)
        case .sessionRunTime: BluetoothUUID(0x2AAB)
        case .recordAccessControlPoint: BluetoothUUID(0x2A52)
        case .specificOpsControlPoint: BluetoothUUID(0x2AAC)
        }
    }

    /// The characteristic with this assigned number, if it is one of the service's.
    public init?(uuid: BluetoothUUID) {
        guard let match = Self.allCases.first(where: { $0.uuid == uuid }) else { return nil }
        self = match
    }

    /// The characteristic inside the service, as the transport names it.
    public var id: GATTCharacteristicID { GATTCharacteristicID(uuid, in: .continuousGlucoseMonitoringService) }
}

extension BluetoothUUID {
    /// Continuous Glucose Monitoring (Bluetooth SIG Assigned Numbers §3.4).
    public static let continuousGlucoseMonitoringService = BluetoothUUID(0x181F)
}

/// Why a CGM characteristic's value does not decode.
public typealias CGMDecodingError = CharacteristicDecodingError<CGMCharacteristic>
