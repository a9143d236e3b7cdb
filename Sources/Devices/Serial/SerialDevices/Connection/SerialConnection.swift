public import HealthModel
public import LinuxSystem

/// One open connection to a serial device, handed to the member's session: the byte stream,
/// who the device is as far as the transport knows, and the protocol it speaks.
///
/// The connector owns the stream: it closes it when the session returns or throws.
public struct SerialConnection: Sendable {
    /// The open tty or socket.
    public let stream: any ByteStreamConnection
    /// The identity known before the device says anything: udev's (model, serial), the path's,
    /// or the RFCOMM address's, with the configured `deviceName` as its name.
    public let device: Device
    /// The protocol to decode: the `decoder` key, or udev's `HEALTHGATE_DECODER` for a
    /// discovered tty.
    public let protocolName: String

    public init(stream: any ByteStreamConnection, device: Device, protocolName: String) {
        self.stream = stream
        self.device = device
        self.protocolName = protocolName
    }
}
