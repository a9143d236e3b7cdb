public import GatewayRuntime
public import SampleBus
public import SerialDevices

/// The `config` object of a `serial-pedometer` source (documented key by key in
/// plugins/SerialPedometer/sample-config.json and README.md). Each key is declared once, in
/// ``configurationKeys``: the keys every serial device shares (where the device is, the line,
/// the protocol, the opening policy) come from SerialDevices, the counting keys are the
/// pedometer's own; a key's default is the value `init()` gives it.
///
/// Exactly one of `path`, `rfcomm` or `udev: true` says where the pedometer is. Durations are in
/// seconds and their keys say so (`reconnectIntervalSeconds`). Decoding is strict;
/// ``validated(in:)`` checks every value.
public struct SerialPedometerConfiguration: Sendable, Hashable, PluginConfigurationContract, SerialDeviceConfiguration,
    RenamedConfigurationKeys
{
    /// The keys every serial device has; the protocol defaults to HGP/1.
    public var connection = SerialConnectionConfiguration(decoder: HGPTextDecoder.name)
    /// Seconds to wait for the answer to `ID?` before counting under the transport identity.
    public var identificationTimeoutSeconds: Double = 3
    /// Intervals longer than this many seconds are flagged as gaps.
    public var gapThresholdSeconds: Double = 900
    /// The largest counter decrease read as a uint32 wrap-around rather than a reboot.
    public var wrapTolerance = 100_000

    /// Every key at its default (no endpoint: a file must say where the pedometer is).
    public init() {}

    /// Old key names, suggested when they are used.
    public static let renamedKeys = SerialConnectionConfiguration.renamedKeys.merging([
        "identificationTimeout": "identificationTimeoutSeconds", "gapThreshold": "gapThresholdSeconds",
    ]) { shared, _ in shared }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        serialDeviceKeys(protocols: PedometerProtocols.names) + [
            ConfigurationKey(
                "identificationTimeoutSeconds", \Self.identificationTimeoutSeconds,
                .number(SerialConnectionConfiguration.intervalRange, unit: "seconds"),
                "How long to wait for the answer to ID? before counting under the transport's identity"),
            ConfigurationKey(
                "gapThresholdSeconds", \Self.gapThresholdSeconds, .number(gapThresholdRange, unit: "seconds"),
                "Intervals longer than this are flagged as gaps"),
            ConfigurationKey(
                "wrapTolerance", \Self.wrapTolerance, .whole(wrapToleranceRange, unit: "steps"),
                "The largest counter decrease read as a wrap-around of the 32-bit counter rather than a reboot"),
        ]
    }

    /// The allowed `gapThresholdSeconds`: up to a week.
    public static let gapThresholdRange: ClosedRange<Double> = 1...604_800
    /// The allowed `wrapTolerance`: at most half the uint32 counter range.
    public static let wrapToleranceRange = 0...Int(UInt32.max / 2)

    /// Checks every key (ranges included, so that no later conversion can trap) and applies
    /// every default: the one place either happens. No I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key as it is written in the file.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> SerialPedometerSettings {
        let connection = try connection.validated(protocols: PedometerProtocols.names)
        try PluginConfigurationError.check(
            "identificationTimeoutSeconds", identificationTimeoutSeconds, in: SerialConnectionConfiguration.intervalRange, unit: "seconds")
        try PluginConfigurationError.check("gapThresholdSeconds", gapThresholdSeconds, in: Self.gapThresholdRange, unit: "seconds")
        try PluginConfigurationError.check("wrapTolerance", wrapTolerance, in: Self.wrapToleranceRange)
        return SerialPedometerSettings(
            connection: connection, identificationTimeout: .milliseconds(Int64(identificationTimeoutSeconds * 1000)),
            wrapTolerance: UInt32(wrapTolerance), gapThresholdSeconds: gapThresholdSeconds)
    }
}

/// A `serial-pedometer` source's settings: its configuration checked, with every default
/// applied. ``SerialPedometerConfiguration/validated(in:)`` makes them; the source is built from
/// them and checks nothing again.
public struct SerialPedometerSettings: Sendable, Hashable {
    /// Where the pedometer is, the line, the protocol and the opening policy.
    public var connection: SerialConnectionSettings
    public var identificationTimeout: Duration
    /// The largest counter decrease read as a uint32 wrap-around rather than a reboot.
    public var wrapTolerance: UInt32
    /// Intervals longer than this are flagged as gaps.
    public var gapThresholdSeconds: Double
}

extension SerialPedometerSource {
    /// The `config` object the catalog decodes for this source.
    public typealias Configuration = SerialPedometerConfiguration
}
