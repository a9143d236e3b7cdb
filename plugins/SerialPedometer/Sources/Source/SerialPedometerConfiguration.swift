public import LinuxSystem
public import GatewayRuntime
public import SampleBus

/// The `config` object of a `serial-pedometer` source (documented key by key in
/// plugins/SerialPedometer/sample-config.json and README.md).
///
/// Exactly one of `path`, `rfcomm` or `udev: true` says where the pedometer is. Durations are in
/// seconds and their keys say so (`reconnectIntervalSeconds`); the Swift properties keep the
/// short names. Decoding is strict; ``validated(in:)`` checks every value.
public struct SerialPedometerConfiguration: Decodable, Sendable, Hashable, PluginConfigurationContract,
    RenamedConfigurationKeys
{
    /// An RFCOMM (Bluetooth serial) endpoint.
    public struct RFCOMM: Decodable, Sendable, Hashable {
        /// `AA:BB:CC:DD:EE:FF`.
        public var address: String
        /// 1–30.
        public var channel: Int
    }

    /// A tty, a pty or a bound `/dev/rfcommN`; reopened whenever it comes back.
    public var path: String?
    /// Connect an RFCOMM socket directly (no `rfcomm bind` needed).
    public var rfcomm: RFCOMM?
    /// Discover devices tagged `HEALTHGATE_ADAPTER=serial-pedometer` by our udev rules.
    public var udev: Bool?
    /// Default 115200.
    public var baudRate: Int?
    /// 5–8, default 8.
    public var dataBits: Int?
    /// `none` (default), `even`, `odd`.
    public var parity: SerialConfiguration.Parity?
    /// 1 (default) or 2.
    public var stopBits: Int?
    /// `none` (default), `rtscts`, `xonxoff`.
    public var flowControl: SerialConfiguration.FlowControl?
    /// The protocol, default `hgp1`; udev's `HEALTHGATE_DECODER` overrides it per device.
    public var decoder: String?
    /// The longest accepted line in bytes, default 256 (16–4096).
    public var maxLineLength: Int?
    /// Lock the tty against other openers (TIOCEXCL + flock), default true.
    public var exclusive: Bool?
    /// Seconds between reopen attempts of a missing `path` or `rfcomm` device, default 2.
    public var reconnectInterval: Double?
    /// Seconds to wait for the answer to `ID?` before counting under the transport identity,
    /// default 3.
    public var identificationTimeout: Double?
    /// Intervals longer than this many seconds are flagged as gaps, default 900.
    public var gapThreshold: Double?
    /// The largest counter decrease read as a uint32 wrap-around rather than a reboot, default 100000.
    public var wrapTolerance: Int?
    /// A display name for a device at `path` or `rfcomm` until it identifies itself.
    public var deviceName: String?

    enum CodingKeys: String, CodingKey {
        case path, rfcomm, udev, baudRate, dataBits, parity, stopBits, flowControl, decoder, maxLineLength, exclusive
        case reconnectInterval = "reconnectIntervalSeconds"
        case identificationTimeout = "identificationTimeoutSeconds"
        case gapThreshold = "gapThresholdSeconds"
        case wrapTolerance, deviceName
    }

    /// Old key names, suggested when they are used.
    public static let renamedKeys = [
        "reconnectInterval": "reconnectIntervalSeconds", "identificationTimeout": "identificationTimeoutSeconds",
        "gapThreshold": "gapThresholdSeconds",
    ]

    /// The allowed `baudRate`.
    public static let baudRateRange = 50...4_000_000
    /// The allowed `maxLineLength`, in bytes.
    public static let maxLineLengthRange = 16...4096
    /// The allowed `reconnectIntervalSeconds` and `identificationTimeoutSeconds`.
    public static let intervalRange: ClosedRange<Double> = 0.01...3600
    /// The allowed `gapThresholdSeconds`: up to a week.
    public static let gapThresholdRange: ClosedRange<Double> = 1...604_800
    /// The allowed `wrapTolerance`: at most half the uint32 counter range.
    public static let wrapToleranceRange = 0...Int(UInt32.max / 2)

    /// Checks every key (ranges included, so that no later conversion can trap) and applies
    /// every default: the one place either happens. No I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key as it is written in the file.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> SerialPedometerSettings {
        let chosen = [path != nil, rfcomm != nil, udev == true].filter { $0 }.count
        guard chosen == 1 else {
            throw PluginConfigurationError(
                keyPath: "path", reason: "set exactly one of \"path\", \"rfcomm\" or \"udev\": true (\(chosen) given)")
        }
        let endpoint: SerialPedometerSource.Endpoint
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
            try PluginConfigurationError.check("rfcomm.channel", rfcomm.channel, in: 1...30)
            endpoint = .rfcomm(address, channel: UInt8(rfcomm.channel))
        } else {
            endpoint = .udev
        }
        if let baudRate { try PluginConfigurationError.check("baudRate", baudRate, in: Self.baudRateRange) }
        if let dataBits { try PluginConfigurationError.check("dataBits", dataBits, in: 5...8) }
        if let stopBits { try PluginConfigurationError.check("stopBits", stopBits, in: 1...2) }
        let serial = SerialConfiguration(
            baudRate: baudRate ?? 115_200, dataBits: dataBits ?? 8, parity: parity ?? .none, stopBits: stopBits ?? 1,
            flowControl: flowControl ?? .none)
        do {
            try serial.validate()
        } catch {
            throw PluginConfigurationError(keyPath: error.field, reason: error.reason)
        }
        let decoderName = decoder ?? HGPTextDecoder.name
        guard PedometerProtocols.names.contains(decoderName) else {
            throw PluginConfigurationError(
                keyPath: "decoder",
                reason: "unknown decoder \"\(decoderName)\"; known: \(PedometerProtocols.names.joined(separator: ", "))")
        }
        let maximumLineLength = maxLineLength ?? 256
        try PluginConfigurationError.check("maxLineLength", maximumLineLength, in: Self.maxLineLengthRange, unit: "bytes")
        let reconnectSeconds = reconnectInterval ?? 2
        try PluginConfigurationError.check("reconnectIntervalSeconds", reconnectSeconds, in: Self.intervalRange, unit: "seconds")
        let identificationSeconds = identificationTimeout ?? 3
        try PluginConfigurationError.check(
            "identificationTimeoutSeconds", identificationSeconds, in: Self.intervalRange, unit: "seconds")
        let gapSeconds = gapThreshold ?? 900
        try PluginConfigurationError.check("gapThresholdSeconds", gapSeconds, in: Self.gapThresholdRange, unit: "seconds")
        let tolerance = wrapTolerance ?? 100_000
        try PluginConfigurationError.check("wrapTolerance", tolerance, in: Self.wrapToleranceRange)
        if let deviceName, deviceName.isEmpty {
            throw PluginConfigurationError(keyPath: "deviceName", reason: "must not be empty")
        }
        return SerialPedometerSettings(
            endpoint: endpoint, serial: serial, decoderName: decoderName, maximumLineLength: maximumLineLength,
            exclusive: exclusive ?? true, reconnectInterval: .milliseconds(Int64(reconnectSeconds * 1000)),
            identificationTimeout: .milliseconds(Int64(identificationSeconds * 1000)),
            wrapTolerance: UInt32(tolerance), gapThresholdSeconds: gapSeconds, deviceName: deviceName)
    }
}

extension SerialPedometerConfiguration {
    /// Every key of the `config` object.
    public static var configurationSchema: ConfigurationSchema {
        .object([
            ConfigurationProperty("path", .string(pattern: "^/", minLength: 1), "A tty, pty or bound /dev/rfcommN (an absolute path)"),
            ConfigurationProperty(
                "rfcomm",
                .object(
                    [
                        ConfigurationProperty(
                            "address", .string(pattern: "^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$"), "The device's Bluetooth address"),
                        ConfigurationProperty("channel", .whole(1...30, unit: "RFCOMM channel"), "The RFCOMM channel"),
                    ], required: ["address", "channel"]),
                "An RFCOMM socket to connect directly"),
            ConfigurationProperty("udev", .boolean, "Follow the ttys our udev rules tag for this plugin"),
            ConfigurationProperty(
                "baudRate", .wholeValues(SerialConfiguration.supportedBaudRates, unit: "bits per second"), default: 115_200,
                "The line's speed, a rate termios can set"),
            ConfigurationProperty("dataBits", .whole(5...8, unit: "bits"), default: 8, "Data bits per character"),
            ConfigurationProperty(
                "parity", .string(values: SerialConfiguration.Parity.allCases.map(\.rawValue)), default: "none", "Parity"),
            ConfigurationProperty("stopBits", .whole(1...2, unit: "bits"), default: 1, "Stop bits"),
            ConfigurationProperty(
                "flowControl", .string(values: SerialConfiguration.FlowControl.allCases.map(\.rawValue)), default: "none",
                "Flow control"),
            ConfigurationProperty(
                "decoder", .string(values: PedometerProtocols.names), default: .string(HGPTextDecoder.name),
                "The line protocol; udev's HEALTHGATE_DECODER overrides it per device"),
            ConfigurationProperty(
                "maxLineLength", .whole(maxLineLengthRange, unit: "bytes"), default: 256, "The longest accepted line"),
            ConfigurationProperty("exclusive", .boolean, default: true, "Lock the tty against other openers"),
            ConfigurationProperty(
                "reconnectIntervalSeconds", .number(intervalRange, unit: "seconds"), default: 2,
                "The wait between reopen attempts of a missing device"),
            ConfigurationProperty(
                "identificationTimeoutSeconds", .number(intervalRange, unit: "seconds"), default: 3,
                "How long to wait for the answer to ID? before counting under the transport's identity"),
            ConfigurationProperty(
                "gapThresholdSeconds", .number(gapThresholdRange, unit: "seconds"), default: 900,
                "Intervals longer than this are flagged as gaps"),
            ConfigurationProperty(
                "wrapTolerance", .whole(wrapToleranceRange, unit: "steps"), default: 100_000,
                "The largest counter decrease read as a wrap-around of the 32-bit counter rather than a reboot"),
            ConfigurationProperty("deviceName", .nonEmptyText, "A display name until the device identifies itself"),
        ])
    }
}

/// A `serial-pedometer` source's settings: its configuration checked, with every default
/// applied. ``SerialPedometerConfiguration/validated(in:)`` makes them; the source is built from
/// them and checks nothing again.
public struct SerialPedometerSettings: Sendable, Hashable {
    /// Where the pedometer is.
    public var endpoint: SerialPedometerSource.Endpoint
    public var serial: SerialConfiguration
    /// The protocol (udev's `HEALTHGATE_DECODER` overrides it per device).
    public var decoderName: String
    public var maximumLineLength: Int
    /// Lock the tty against other openers.
    public var exclusive: Bool
    public var reconnectInterval: Duration
    public var identificationTimeout: Duration
    /// The largest counter decrease read as a uint32 wrap-around rather than a reboot.
    public var wrapTolerance: UInt32
    /// Intervals longer than this are flagged as gaps.
    public var gapThresholdSeconds: Double
    /// A display name for a device at a path or RFCOMM address until it identifies itself.
    public var deviceName: String?
}

extension SerialPedometerSource {
    /// The `config` object the catalog decodes for this source.
    public typealias Configuration = SerialPedometerConfiguration
}
