import LinuxSystem
public import GatewayRuntime

/// A serial family member's `config` object: the shared keys (``SerialConnectionConfiguration``) at the
/// top level beside the member's own, every key declared once.
///
/// ```swift
/// static var configurationKeys: [ConfigurationKey<Self>] {
///     serialDeviceKeys(protocols: MyProtocols.names) + [ /* the member's own keys */ ]
/// }
/// ```
public protocol SerialDeviceConfiguration: DeclaredConfiguration {
    /// The shared keys' values.
    var connection: SerialConnectionConfiguration { get set }
}

extension SerialDeviceConfiguration {
    /// The shared keys, in the order the schema lists them: `path`, `rfcomm`, `udev`, the line
    /// settings, `decoder` (one of `protocols`), `maxLineLength`, `exclusive`,
    /// `reconnectIntervalSeconds` and `deviceName`.
    public static func serialDeviceKeys(protocols: [String]) -> [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "path", \Self.connection.path, .string(pattern: "^/", minLength: 1), "A tty, pty or bound /dev/rfcommN (an absolute path)"),
            ConfigurationKey("rfcomm", \Self.connection.rfcomm, SerialConnectionConfiguration.RFCOMM.configurationSchema, "An RFCOMM socket to connect directly"),
            ConfigurationKey("udev", \Self.connection.udev, .boolean, "Follow the ttys our udev rules tag for this plugin"),
            ConfigurationKey(
                "baudRate", \Self.connection.baudRate, .wholeValues(SerialConfiguration.supportedBaudRates, unit: "bits per second"),
                "The line's speed, a rate termios can set"),
            ConfigurationKey(
                "dataBits", \Self.connection.dataBits, .whole(SerialConnectionConfiguration.dataBitsRange, unit: "bits"), "Data bits per character"),
            ConfigurationKey(
                "parity", \Self.connection.parity, .string(values: SerialConfiguration.Parity.allCases.map(\.rawValue)), "Parity"),
            ConfigurationKey("stopBits", \Self.connection.stopBits, .whole(SerialConnectionConfiguration.stopBitsRange, unit: "bits"), "Stop bits"),
            ConfigurationKey(
                "flowControl", \Self.connection.flowControl,
                .string(values: SerialConfiguration.FlowControl.allCases.map(\.rawValue)), "Flow control"),
            ConfigurationKey(
                "decoder", \Self.connection.decoder, .string(values: protocols),
                "The line protocol; udev's HEALTHGATE_DECODER overrides it per device"),
            ConfigurationKey(
                "maxLineLength", \Self.connection.maxLineLength, .whole(SerialConnectionConfiguration.maxLineLengthRange, unit: "bytes"),
                "The longest accepted line"),
            ConfigurationKey("exclusive", \Self.connection.exclusive, .boolean, "Lock the tty against other openers"),
            ConfigurationKey(
                "reconnectIntervalSeconds", \Self.connection.reconnectIntervalSeconds,
                .number(SerialConnectionConfiguration.intervalRange, unit: "seconds"), "The wait between reopen attempts of a missing device"),
            ConfigurationKey("deviceName", \Self.connection.deviceName, .nonEmptyText, "A display name until the device identifies itself"),
        ]
    }
}
