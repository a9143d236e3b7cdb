/// A Bluetooth UUID, kept in its 128-bit lower-case string form, as BlueZ reports it.
///
/// 16-bit assigned numbers expand onto the Bluetooth Base UUID
/// (`0000xxxx-0000-1000-8000-00805f9b34fb`, Core Specification Vol 3, Part B, §2.5.1).
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible, Codable {
    /// The 128-bit form, lower case.
    public let uuidString: String

    /// Expands a 16-bit assigned number.
    public init(_ short: UInt16) {
        self.init(full: Self.expand(short))
    }

    private init(full: String) {
        uuidString = full
    }

    private static func expand(_ short: UInt16) -> String {
        let hex = String(short, radix: 16)
        return "0000" + String(repeating: "0", count: 4 - hex.count) + hex + "-0000-1000-8000-00805f9b34fb"
    }

    /// Parses a 16-bit (`180d`, `0x180D`) or 128-bit UUID string. Returns nil otherwise.
    public init?(string: String) {
        var text = string.lowercased()
        if text.hasPrefix("0x") { text.removeFirst(2) }
        if text.count == 4, let short = UInt16(text, radix: 16) {
            self.init(short)
            return
        }
        let hexDigits = text.filter { $0 != "-" }
        guard text.count == 36, hexDigits.count == 32, hexDigits.allSatisfy(\.isHexDigit) else { return nil }
        self.init(full: text)
    }

    /// The 16-bit number when the UUID is on the Base UUID, else nil.
    public var shortValue: UInt16? {
        guard uuidString.hasPrefix("0000"), uuidString.hasSuffix("-0000-1000-8000-00805f9b34fb") else { return nil }
        return UInt16(uuidString.dropFirst(4).prefix(4), radix: 16)
    }

    public var description: String {
        shortValue.map { short in
            let hex = String(short, radix: 16)
            return String(repeating: "0", count: 4 - hex.count) + hex
        } ?? uuidString
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let uuid = BluetoothUUID(string: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a Bluetooth UUID: \(text)")
        }
        self = uuid
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

// Assigned numbers (Bluetooth SIG, "Assigned Numbers", §3.4 services and §3.8 characteristics).
extension BluetoothUUID {
    public static let heartRateService = BluetoothUUID(0x180D)
    public static let runningSpeedAndCadenceService = BluetoothUUID(0x1814)
    public static let deviceInformationService = BluetoothUUID(0x180A)
    public static let batteryService = BluetoothUUID(0x180F)

    public static let heartRateMeasurement = BluetoothUUID(0x2A37)
    public static let bodySensorLocation = BluetoothUUID(0x2A38)
    public static let heartRateControlPoint = BluetoothUUID(0x2A39)
    public static let rscMeasurement = BluetoothUUID(0x2A53)
    public static let rscFeature = BluetoothUUID(0x2A54)
    public static let batteryLevel = BluetoothUUID(0x2A19)
    public static let manufacturerName = BluetoothUUID(0x2A29)
    public static let modelNumber = BluetoothUUID(0x2A24)
    public static let serialNumber = BluetoothUUID(0x2A25)
    public static let hardwareRevision = BluetoothUUID(0x2A27)
    public static let firmwareRevision = BluetoothUUID(0x2A26)
    public static let softwareRevision = BluetoothUUID(0x2A28)
}
