import HealthModel

/// What makes two samples' devices one device in statistics separated by device: the name,
/// manufacturer, model and local identifier, the fields ``SampleFilter`` filters by, so each
/// device's row can be reproduced with a filter. Hardware, firmware and software versions are
/// not part of it (an update does not make another device), nor is the UDI, which sources rarely
/// set. The local identifier alone is not enough: samples written without one (a store file
/// filled by another program) would all merge into one device.
struct DeviceIdentity: Hashable, Sendable, Comparable {
    var name: String?
    var manufacturer: String?
    var model: String?
    var localIdentifier: String?

    init(name: String?, manufacturer: String?, model: String?, localIdentifier: String?) {
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.localIdentifier = localIdentifier
    }

    init(_ device: Device) {
        self.init(
            name: device.name, manufacturer: device.manufacturer, model: device.model,
            localIdentifier: device.localIdentifier)
    }

    /// The device as the statistics report it: the identifying fields only.
    var device: Device {
        Device(name: name, manufacturer: manufacturer, model: model, localIdentifier: localIdentifier)
    }

    /// By name, manufacturer, model and local identifier; a missing field sorts first.
    static func < (lhs: DeviceIdentity, rhs: DeviceIdentity) -> Bool {
        for (left, right) in [(lhs.name, rhs.name), (lhs.manufacturer, rhs.manufacturer), (lhs.model, rhs.model),
                              (lhs.localIdentifier, rhs.localIdentifier)] where left != right {
            guard let left else { return true }
            guard let right else { return false }
            return left < right
        }
        return false
    }
}
