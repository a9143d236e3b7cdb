/// The device that produced a sample, like HealthKit's HKDevice.
///
/// Every field is optional because devices report different subsets. `localIdentifier` is the
/// gateway's stable identity for the device: a BLE address, a USB `ID_SERIAL`, or a serial number.
public struct Device: Hashable, Sendable, Codable {
    public var name: String?
    public var manufacturer: String?
    public var model: String?
    public var hardwareVersion: String?
    public var firmwareVersion: String?
    public var softwareVersion: String?
    public var localIdentifier: String?
    public var udiDeviceIdentifier: String?

    // Inlinable: a caller's strings move into the value instead of being retained once more
    // (the store's newest-sample read builds one per call).
    @inlinable
    public init(
        name: String? = nil, manufacturer: String? = nil, model: String? = nil,
        hardwareVersion: String? = nil, firmwareVersion: String? = nil,
        softwareVersion: String? = nil, localIdentifier: String? = nil,
        udiDeviceIdentifier: String? = nil
    ) {
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.hardwareVersion = hardwareVersion
        self.firmwareVersion = firmwareVersion
        self.softwareVersion = softwareVersion
        self.localIdentifier = localIdentifier
        self.udiDeviceIdentifier = udiDeviceIdentifier
    }

    /// A short label for logs: the name, else the local identifier, else "unknown device".
    public var displayName: String {
        switch (name, localIdentifier) {
        case (let name?, let id?) where name != id: "\(name) [\(id)]"
        case (let name?, _): name
        case (nil, let id?): id
        case (nil, nil): "unknown device"
        }
    }
}

extension Device {
    /// Whether a record's `device` is in `selection`, a list of local identifiers, names or
    /// display names as a workout's or participant's `devices` gives them. A nil `selection`
    /// takes every device; a record without a device matches only then.
    public static func matches(_ device: Device?, selection: [String]?) -> Bool {
        guard let selection else { return true }
        guard let device else { return false }
        let names = [device.localIdentifier, device.name, device.displayName].compactMap { $0 }
        return names.contains(where: selection.contains)
    }
}
