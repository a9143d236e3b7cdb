public import BLETransport
public import GATTDecoding

/// The characteristics and descriptors of the Generic Health Sensor service (GHSS 1.0, 0x1840)
/// this plugin decodes, named in errors and logs.
public enum GHSCharacteristic: String, DecodedCharacteristic, CaseIterable {
    case healthSensorFeatures
    case liveHealthObservations
    case storedHealthObservations
    case recordAccessControlPoint
    case controlPoint
    case observationScheduleChanged
    case securityLevels
    /// The Observation Schedule descriptor (0x2910) of Health Sensor Features, one per type.
    case observationSchedule
    /// The Valid Range and Accuracy descriptor (0x2911) of Health Sensor Features, one per type.
    case validRangeAndAccuracy

    /// The name and assigned number from the GATT Specification Supplement.
    public var displayName: String {
        switch self {
        case .healthSensorFeatures: "Health Sensor Features (0x2BF3)"
        case .liveHealthObservations: "Live Health Observations (0x2B8B)"
        case .storedHealthObservations: "Stored Health Observations (0x2BDD)"
        case .recordAccessControlPoint: "Record Access Control Point (0x2A52)"
        case .controlPoint: "GHS Control Point (0x2BF4)"
        case .observationScheduleChanged: "Observation Schedule Changed (0x2BF1)"
        case .securityLevels: "LE GATT Security Levels (0x2BF5)"
        case .observationSchedule: "Observation Schedule descriptor (0x2910)"
        case .validRangeAndAccuracy: "Valid Range and Accuracy descriptor (0x2911)"
        }
    }

    /// The 16-bit assigned number.
    public var uuid: BluetoothUUID {
        switch self {
        case .healthSensorFeatures: BluetoothUUID(0x2BF3)
        case .liveHealthObservations: BluetoothUUID(0x2B8B)
        case .storedHealthObservations: BluetoothUUID(0x2BDD)
        case .recordAccessControlPoint: BluetoothUUID(0x2A52)
        case .controlPoint: BluetoothUUID(0x2BF4)
        case .observationScheduleChanged: BluetoothUUID(0x2BF1)
        case .securityLevels: BluetoothUUID(0x2BF5)
        case .observationSchedule: BluetoothUUID(0x2910)
        case .validRangeAndAccuracy: BluetoothUUID(0x2911)
        }
    }

    /// The characteristic inside the service, as the transport names it.
    public var id: GATTCharacteristicID { GATTCharacteristicID(uuid, in: .genericHealthSensorService) }
}

extension BluetoothUUID {
    /// Generic Health Sensor (Bluetooth SIG Assigned Numbers §3.4).
    public static let genericHealthSensorService = BluetoothUUID(0x1840)
}

/// Why a GHS characteristic's value does not decode.
public typealias GHSDecodingError = CharacteristicDecodingError<GHSCharacteristic>
