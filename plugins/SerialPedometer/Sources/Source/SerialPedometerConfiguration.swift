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

    /// Checks every key (ranges included, so that no later conversion can trap); no I/O. The
    /// settings are the configuration itself; the source applies the documented defaults.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> SerialPedometerConfiguration {
        let chosen = [path != nil, rfcomm != nil, udev == true].filter { $0 }.count
        guard chosen == 1 else {
            throw PluginConfigurationError(
                keyPath: "path", reason: "set exactly one of \"path\", \"rfcomm\" or \"udev\": true (\(chosen) given)")
        }
        if let path, !path.hasPrefix("/") {
            throw PluginConfigurationError(keyPath: "path", reason: "\"\(path)\" is not an absolute path")
        }
        if let rfcomm {
            guard BluetoothAddress(rfcomm.address) != nil else {
                throw PluginConfigurationError(
                    keyPath: "rfcomm.address", reason: "\"\(rfcomm.address)\" is not a Bluetooth address AA:BB:CC:DD:EE:FF")
            }
            try PluginConfigurationError.check("rfcomm.channel", rfcomm.channel, in: 1...30)
        }
        if let baudRate { try PluginConfigurationError.check("baudRate", baudRate, in: Self.baudRateRange) }
        if let dataBits { try PluginConfigurationError.check("dataBits", dataBits, in: 5...8) }
        if let stopBits { try PluginConfigurationError.check("stopBits", stopBits, in: 1...2) }
        if let decoder, !PedometerProtocols.names.contains(decoder) {
            throw PluginConfigurationError(
                keyPath: "decoder",
                reason: "unknown decoder \"\(decoder)\"; known: \(PedometerProtocols.names.joined(separator: ", "))")
        }
        if let maxLineLength {
            try PluginConfigurationError.check("maxLineLength", maxLineLength, in: Self.maxLineLengthRange, unit: "bytes")
        }
        if let reconnectInterval {
            try PluginConfigurationError.check("reconnectIntervalSeconds", reconnectInterval, in: Self.intervalRange, unit: "seconds")
        }
        if let identificationTimeout {
            try PluginConfigurationError.check(
                "identificationTimeoutSeconds", identificationTimeout, in: Self.intervalRange, unit: "seconds")
        }
        if let gapThreshold {
            try PluginConfigurationError.check("gapThresholdSeconds", gapThreshold, in: Self.gapThresholdRange, unit: "seconds")
        }
        if let wrapTolerance {
            try PluginConfigurationError.check("wrapTolerance", wrapTolerance, in: Self.wrapToleranceRange)
        }
        if let deviceName, deviceName.isEmpty {
            throw PluginConfigurationError(keyPath: "deviceName", reason: "must not be empty")
        }
        return self
    }
}

extension SerialPedometerSource {
    /// The `config` object the catalog decodes for this source.
    public typealias Configuration = SerialPedometerConfiguration
}
