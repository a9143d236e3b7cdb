import BLETransport
import DBus

/// What one bluetoothd signal says of a device on the scanned adapter
/// (``changes(of:applyingTo:adapter:)``), by its object path.
enum ScanDeviceChange: Equatable {
    /// Its advertising data or RSSI changed, or it was added: an advertisement.
    case advertised(path: String)
    /// What discovery shows of it changed, or it was added.
    case found(path: String)
    /// Only its name changed: the management socket's reader learns it.
    case named(path: String)
    /// It was removed.
    case lost(address: String)

    /// What a bluetoothd signal says of the devices of `adapter`, in the order the scan reports
    /// it, once applied to `tree`: a device added is advertised and found; a change of its data
    /// or RSSI is advertised, of its name only named; a change of what discovery shows (RSSI,
    /// name, alias, UUIDs) is found; a device removed is lost. Pure: no bus, no reader.
    /// - Throws: ``BLETransportError`` `unavailable` when the adapter was removed or powered off.
    static func changes(
        of signal: DBusSignal, applyingTo tree: inout BlueZObjectTree, adapter: String
    ) throws(BLETransportError) -> [ScanDeviceChange] {
        // The device about to go, read before the signal removes it.
        let removedDevice = signal.interfacesRemoved.flatMap { removed in
            removed.interfaces.contains(BlueZInterface.device) ? tree.device(at: removed.path, adapter: adapter) : nil
        }
        tree.apply(signal)
        if let added = signal.interfacesAdded, added.interfaces[BlueZInterface.device] != nil {
            return [.advertised(path: added.path), .found(path: added.path)]
        } else if let change = signal.propertiesChanged, change.interface == BlueZInterface.device {
            var changes: [ScanDeviceChange] = []
            let keys = Set(change.changed.keys)
            if !keys.isDisjoint(with: ["ManufacturerData", "ServiceData", "RSSI"]) {
                changes.append(.advertised(path: signal.path))
            } else if keys.contains("Name") {
                changes.append(.named(path: signal.path))
            }
            if !keys.isDisjoint(with: ["RSSI", "Name", "Alias", "UUIDs"]) { changes.append(.found(path: signal.path)) }
            return changes
        } else if let removedDevice {
            return [.lost(address: removedDevice.address)]
        } else if let removed = signal.interfacesRemoved, removed.path == adapter, removed.interfaces.contains(BlueZInterface.adapter) {
            throw BLETransportError(.unavailable, "Bluetooth adapter \(adapter) was removed")
        } else if let change = signal.propertiesChanged, change.interface == BlueZInterface.adapter,
            signal.path == adapter, change.changed["Powered"]?.bool == false
        {
            throw BLETransportError(.unavailable, "Bluetooth adapter \(adapter) was powered off")
        }
        return []
    }
}
