public import LinuxSystem

/// The shared keys checked, with every default applied
/// (``SerialConnectionConfiguration/validated(protocols:)``): what ``SerialDeviceConnector`` opens.
public struct SerialConnectionSettings: Sendable, Hashable {
    /// Where the device is.
    public var endpoint: SerialEndpoint
    /// The line settings.
    public var serial: SerialConfiguration
    /// The protocol (udev's `HEALTHGATE_DECODER` overrides it per device).
    public var protocolName: String
    /// The longest accepted line, for line protocols.
    public var maximumLineLength: Int
    /// Lock the tty against other openers.
    public var exclusive: Bool
    /// The wait between reopen attempts of a missing `path` or `rfcomm` device.
    public var reconnectInterval: Duration
    /// A display name for a device at a path or RFCOMM address until it identifies itself.
    public var deviceName: String?

    public init(
        endpoint: SerialEndpoint, serial: SerialConfiguration, protocolName: String, maximumLineLength: Int,
        exclusive: Bool, reconnectInterval: Duration, deviceName: String?
    ) {
        self.endpoint = endpoint
        self.serial = serial
        self.protocolName = protocolName
        self.maximumLineLength = maximumLineLength
        self.exclusive = exclusive
        self.reconnectInterval = reconnectInterval
        self.deviceName = deviceName
    }
}
