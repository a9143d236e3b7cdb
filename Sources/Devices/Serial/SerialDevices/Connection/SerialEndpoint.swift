public import LinuxSystem

/// Where a serial device is: a tty path, a direct RFCOMM socket, or every tty udev tags for the
/// member (the `path`, `rfcomm` and `udev` keys; exactly one).
public enum SerialEndpoint: Hashable, Sendable {
    /// A tty, a pty or a bound `/dev/rfcommN`; reopened whenever it comes back.
    case path(String)
    /// An RFCOMM socket connected directly (no `rfcomm bind` needed).
    case rfcomm(BluetoothAddress, channel: UInt8)
    /// Every tty healthgate's udev rules tag for the member, followed as it is plugged in and out.
    case udev
}
