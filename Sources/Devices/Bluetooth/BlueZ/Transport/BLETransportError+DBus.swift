import BLETransport
import DBus

/// What was being done when BlueZ failed, for mapping its error names.
enum BlueZOperation {
    case discover, connect, gatt
}

extension BLETransportError {
    /// Maps a failure from the D-Bus layer onto the transport contract. `CancellationError`
    /// and errors that are already ``BLETransportError`` pass through unchanged.
    static func mapping(_ error: any Error, device: String?, during operation: BlueZOperation) -> any Error {
        if error is CancellationError || error is BLETransportError { return error }
        guard let dbus = error as? DBusError else {
            return BLETransportError(.failed, device: device, "\(error)")
        }
        let text = dbus.description
        if let absence = BluetoothAbsence.meaning(of: dbus, address: nil) {
            return BLETransportError(.unavailable, device: device, absence.message)
        }
        if dbus.isUnavailable {
            return BLETransportError(.unavailable, device: device, "bluetoothd is not reachable: \(text)")
        }
        switch dbus.name {
        case DBusError.bluezInProgress:
            return BLETransportError(.inProgress, device: device, text)
        case DBusError.bluezNotConnected:
            return BLETransportError(.disconnected, device: device, text)
        case DBusError.bluezNotSupported:
            return BLETransportError(.notSupported, device: device, text)
        case DBusError.bluezDoesNotExist, DBusError.unknownObject:
            return BLETransportError(.notFound, device: device, text)
        case DBusError.bluezNotReady:
            return BLETransportError(.unavailable, device: device, "the adapter is not ready: \(text)")
        case DBusError.bluezFailed, DBusError.noReply, DBusError.bluezNotAvailable:
            // Device1.Connect fails with org.bluez.Error.Failed and a reason such as
            // "le-connection-abort-by-local" (BlueZ doc/org.bluez.Device.rst); all are worth a retry.
            return BLETransportError(operation == .connect ? .connectFailed : .failed, device: device, text)
        default:
            return BLETransportError(operation == .connect ? .connectFailed : .failed, device: device, text)
        }
    }
}
