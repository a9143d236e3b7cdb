import BLEProfileKit
public import BLETransport

/// The assigned numbers of the fitness profiles (Bluetooth SIG Assigned Numbers, §3.4 and §3.8).
extension BluetoothUUID {
    public static let cyclingSpeedAndCadenceService = BluetoothUUID(0x1816)
    public static let cyclingPowerService = BluetoothUUID(0x1818)
    public static let fitnessMachineService = BluetoothUUID(0x1826)
}

extension FitnessCharacteristic {
    /// The characteristic's assigned number.
    public var uuid: BluetoothUUID {
        switch self {
        case .cscMeasurement: BluetoothUUID(0x2A5B)
        case .cscFeature: BluetoothUUID(0x2A5C)
        case .cyclingPowerMeasurement: BluetoothUUID(0x2A63)
        case .cyclingPowerFeature: BluetoothUUID(0x2A65)
        case .sensorLocation: BluetoothUUID(0x2A5D)
        case .treadmillData: BluetoothUUID(0x2ACD)
        case .indoorBikeData: BluetoothUUID(0x2AD2)
        case .rowerData: BluetoothUUID(0x2AD1)
        case .fitnessMachineFeature: BluetoothUUID(0x2ACC)
        case .fitnessMachineStatus: BluetoothUUID(0x2ADA)
        }
    }

    /// The measurements a source subscribes to, each in its service, in the order tried.
    public static let measurements: [(characteristic: FitnessCharacteristic, service: BluetoothUUID)] = [
        (.cscMeasurement, .cyclingSpeedAndCadenceService),
        (.cyclingPowerMeasurement, .cyclingPowerService),
        (.treadmillData, .fitnessMachineService),
        (.indoorBikeData, .fitnessMachineService),
        (.rowerData, .fitnessMachineService),
        (.fitnessMachineStatus, .fitnessMachineService),
    ]

    /// The characteristic with this assigned number, if it is one of the fitness profiles'.
    public init?(uuid: BluetoothUUID) {
        guard let match = Self.allCases.first(where: { $0.uuid == uuid }) else { return nil }
        self = match
    }
}
