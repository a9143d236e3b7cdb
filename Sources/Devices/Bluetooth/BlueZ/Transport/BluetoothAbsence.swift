public import BLETransport
import DBus
import LinuxSystem

/// Why Bluetooth cannot be reached, with what a person does about it: the message of every
/// ``BLETransportError`` `.unavailable` this transport throws. Declared once so that `scan`,
/// `pair`, a source's status and the troubleshooting tables (checked by a test against
/// ``examples``) say the same thing.
public enum BluetoothAbsence: Hashable, Sendable {
    /// Nothing listens on the system bus socket (`address` when one was given).
    case noSystemBus(address: String?)
    /// The bus refused us (EACCES on its socket).
    case busRefused(address: String?)
    /// The bus connection dropped.
    case busDropped
    /// org.bluez has no owner on the bus: bluetoothd is not running.
    case noBluetoothd
    /// BlueZ exports no adapter, or not the one named.
    case noAdapter(String?)
    /// The adapter is there but powered off.
    case adapterOff(String)

    /// What is missing, then the fix. Written to follow "no Bluetooth: ", as `scan`, `pair` and
    /// the sources print it.
    public var message: String {
        switch self {
        case .noSystemBus(let address):
            "the D-Bus system bus is not running\(address.map { " (\($0))" } ?? ""): "
                + "install and start dbus (apt install dbus; systemctl start dbus)"
        case .busRefused(let address):
            "the D-Bus system bus refused the connection\(address.map { " (\($0))" } ?? ""): "
                + "run as a user the bus lets in (see the D-Bus policy in Sources/Devices/Bluetooth/BlueZ/README.md)"
        case .busDropped:
            "the D-Bus system bus closed the connection: check that dbus is running (systemctl status dbus)"
        case .noBluetoothd:
            "bluetoothd is not running (org.bluez is not on the system bus): apt install bluez; systemctl start bluetooth"
        case .noAdapter(nil):
            "BlueZ sees no adapter: plug one in, or unblock it (rfkill unblock bluetooth); bluetoothctl list shows the adapters"
        case .noAdapter(let name?):
            "BlueZ has no adapter \(name): bluetoothctl list shows the adapters it has; name one of them (--adapter, \"adapter\")"
        case .adapterOff(let name):
            "Bluetooth adapter \(name) is powered off: bluetoothctl power on (or AutoEnable=true in /etc/bluetooth/main.conf)"
        }
    }

    /// The transport error a person reads.
    public var error: BLETransportError { BLETransportError(.unavailable, message) }

    /// One of each, for documentation and its test.
    public static let examples: [BluetoothAbsence] = [
        .noSystemBus(address: nil), .busRefused(address: nil), .busDropped, .noBluetoothd, .noAdapter(nil),
        .noAdapter("hci1"), .adapterOff("hci0"),
    ]

    /// The absence a D-Bus failure means, or nil when it is not one. `address` is the bus
    /// address we connected to (nil: the system bus).
    static func meaning(of error: DBusError, address: String?) -> BluetoothAbsence? {
        switch error.name {
        case DBusError.serviceUnknown, DBusError.nameHasNoOwner: return .noBluetoothd
        case DBusError.noServer: return .noSystemBus(address: address)
        case DBusError.disconnected: return .busDropped
        default: break
        }
        switch Errno(rawValue: error.errno ?? 0) {
        case .noSuchFile, .connectionRefused: return .noSystemBus(address: address)
        case .permissionDenied: return .busRefused(address: address)
        case .connectionReset, .notConnected: return .busDropped
        default: return nil
        }
    }
}
