public import LinuxSystem
public import GatewayRuntime

/// The keys every serial family member's `config` object has, declared once here
/// (``SerialDeviceConfiguration/serialDeviceKeys(protocols:)``): where the device is (exactly one
/// of `path`, `rfcomm` or `udev: true`), the line settings, the protocol and its framing cap,
/// the opening policy and a display name. Each value's default is the one `init` gives it.
public struct SerialConnectionConfiguration: Sendable, Hashable {
    /// An RFCOMM (Bluetooth serial) endpoint: the `rfcomm` block.
    public struct RFCOMM: Sendable, Hashable, DeclaredConfiguration {
        /// `AA:BB:CC:DD:EE:FF`.
        public var address = ""
        /// 1–30.
        public var channel = 0

        /// Placeholders for the required keys (the decoder replaces them).
        public init() {}

        public init(address: String, channel: Int) {
            self.address = address
            self.channel = channel
        }

        public static var configurationKeys: [ConfigurationKey<Self>] {
            [
                .required(
                    "address", \.address, .string(pattern: "^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$"), "The device's Bluetooth address"),
                .required("channel", \.channel, .whole(SerialConnectionConfiguration.rfcommChannelRange, unit: "RFCOMM channel"), "The RFCOMM channel"),
            ]
        }
    }

    /// A tty, a pty or a bound `/dev/rfcommN`; reopened whenever it comes back.
    public var path: String?
    /// Connect an RFCOMM socket directly (no `rfcomm bind` needed).
    public var rfcomm: RFCOMM?
    /// Discover the ttys our udev rules tag `HEALTHGATE_ADAPTER=<kind>`.
    public var udev: Bool?
    public var baudRate = 115_200
    public var dataBits = 8
    public var parity = SerialConfiguration.Parity.none
    public var stopBits = 1
    public var flowControl = SerialConfiguration.FlowControl.none
    /// The protocol; udev's `HEALTHGATE_DECODER` overrides it per device.
    public var decoder: String
    /// The longest accepted line in bytes, for line protocols (``LineFramer``).
    public var maxLineLength = 256
    /// Lock the tty against other openers (TIOCEXCL + flock).
    public var exclusive = true
    /// Seconds between reopen attempts of a missing `path` or `rfcomm` device.
    public var reconnectIntervalSeconds: Double = 2
    /// A display name for a device at `path` or `rfcomm` until it identifies itself.
    public var deviceName: String?

    /// Every key at its default, the protocol `decoder` (the member's default protocol).
    public init(decoder: String) {
        self.decoder = decoder
    }

    /// Old key names, suggested when they are used.
    public static let renamedKeys = ["reconnectInterval": "reconnectIntervalSeconds"]

    /// The allowed `baudRate` (``SerialConfiguration/supportedBaudRates`` are the rates within).
    public static let baudRateRange = 50...4_000_000
    /// The allowed `dataBits`.
    public static let dataBitsRange = 5...8
    /// The allowed `stopBits`.
    public static let stopBitsRange = 1...2
    /// The allowed `rfcomm.channel`.
    public static let rfcommChannelRange = 1...30
    /// The allowed `maxLineLength`, in bytes.
    public static let maxLineLengthRange = 16...4096
    /// The allowed `reconnectIntervalSeconds` (members use it for their own timeouts too).
    public static let intervalRange: ClosedRange<Double> = 0.01...3600

    /// Checks every shared key and what ties them together (exactly one endpoint).
    /// - Parameter protocols: the member's compiled-in protocols, which `decoder` must name.
    /// - Throws: ``PluginConfigurationError`` naming the key as it is written in the file.
    public func validated(protocols: [String]) throws(PluginConfigurationError) -> SerialConnectionSettings {
        let chosen = [path != nil, rfcomm != nil, udev == true].filter { $0 }.count
        guard chosen == 1 else {
            throw PluginConfigurationError(
                keyPath: "path", reason: "set exactly one of \"path\", \"rfcomm\" or \"udev\": true (\(chosen) given)")
        }
        let endpoint: SerialEndpoint
        if let path {
            guard path.hasPrefix("/") else {
                throw PluginConfigurationError(keyPath: "path", reason: "\"\(path)\" is not an absolute path")
            }
            endpoint = .path(path)
        } else if let rfcomm {
            guard let address = BluetoothAddress(rfcomm.address) else {
                throw PluginConfigurationError(
                    keyPath: "rfcomm.address", reason: "\"\(rfcomm.address)\" is not a Bluetooth address AA:BB:CC:DD:EE:FF")
            }
            try PluginConfigurationError.check("rfcomm.channel", rfcomm.channel, in: Self.rfcommChannelRange)
            endpoint = .rfcomm(address, channel: UInt8(rfcomm.channel))
        } else {
            endpoint = .udev
        }
        try PluginConfigurationError.check("baudRate", baudRate, in: Self.baudRateRange)
        try PluginConfigurationError.check("dataBits", dataBits, in: Self.dataBitsRange)
        try PluginConfigurationError.check("stopBits", stopBits, in: Self.stopBitsRange)
        let serial = SerialConfiguration(
            baudRate: baudRate, dataBits: dataBits, parity: parity, stopBits: stopBits, flowControl: flowControl)
        do {
            try serial.validate()
        } catch {
            throw PluginConfigurationError(keyPath: error.field, reason: error.reason)
        }
        guard protocols.contains(decoder) else {
            throw PluginConfigurationError(
                keyPath: "decoder", reason: "unknown decoder \"\(decoder)\"; known: \(protocols.joined(separator: ", "))")
        }
        try PluginConfigurationError.check("maxLineLength", maxLineLength, in: Self.maxLineLengthRange, unit: "bytes")
        try PluginConfigurationError.check(
            "reconnectIntervalSeconds", reconnectIntervalSeconds, in: Self.intervalRange, unit: "seconds")
        if let deviceName, deviceName.isEmpty {
            throw PluginConfigurationError(keyPath: "deviceName", reason: "must not be empty")
        }
        return SerialConnectionSettings(
            endpoint: endpoint, serial: serial, protocolName: decoder, maximumLineLength: maxLineLength,
            exclusive: exclusive, reconnectInterval: .milliseconds(Int64(reconnectIntervalSeconds * 1000)),
            deviceName: deviceName)
    }
}

extension SerialConfiguration.Parity: ConfigurationValue {}
extension SerialConfiguration.FlowControl: ConfigurationValue {}
