import BLEProfileKit
public import BLETransport

/// The assigned numbers of the health profiles (Bluetooth SIG Assigned Numbers §3.4, §3.8).
extension BluetoothUUID {
    public static let weightScaleService = BluetoothUUID(0x181D)
    public static let bodyCompositionService = BluetoothUUID(0x181B)
    public static let bloodPressureService = BluetoothUUID(0x1810)
    public static let healthThermometerService = BluetoothUUID(0x1809)
    public static let pulseOximeterService = BluetoothUUID(0x1822)
    public static let glucoseService = BluetoothUUID(0x1808)
    public static let currentTimeService = BluetoothUUID(0x1805)
    /// Current Time (0x2A2B): Exact Time 256, whose first seven octets are a Date Time.
    public static let currentTime = BluetoothUUID(0x2A2B)
    /// Record Access Control Point (0x2A52) of the Glucose service.
    public static let recordAccessControlPoint = BluetoothUUID(0x2A52)
}

extension HealthCharacteristic {
    /// The characteristic's assigned number.
    public var uuid: BluetoothUUID { BluetoothUUID(assignedNumber) }

    /// The service the characteristic belongs to.
    public var service: BluetoothUUID {
        switch self {
        case .weightMeasurement: .weightScaleService
        case .bodyCompositionMeasurement: .bodyCompositionService
        case .bloodPressureMeasurement, .intermediateCuffPressure: .bloodPressureService
        case .temperatureMeasurement: .healthThermometerService
        case .glucoseMeasurement, .glucoseMeasurementContext: .glucoseService
        case .plxSpotCheckMeasurement, .plxContinuousMeasurement: .pulseOximeterService
        }
    }

    /// The characteristic with this assigned number, if it is one of the health profiles'.
    public init?(uuid: BluetoothUUID) {
        guard let match = Self.allCases.first(where: { $0.uuid == uuid }) else { return nil }
        self = match
    }
}
