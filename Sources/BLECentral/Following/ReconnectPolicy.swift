import FoundationEssentials
public import GatewayRuntime
#if canImport(Glibc)
import Glibc
#endif

/// Reconnect backoff: the n-th consecutive failed attempt waits `initialDelay × multiplierⁿ⁻¹`,
/// capped at `maximumDelay`. Attempts never stop.
public struct ReconnectPolicy: Decodable, Sendable, Hashable, RenamedConfigurationKeys {
    /// The wait after the first failure (and after a link loss).
    public var initialDelay: Duration
    /// The longest wait.
    public var maximumDelay: Duration
    /// The growth factor per consecutive failure (≥ 1).
    public var multiplier: Double

    /// A policy; the defaults are 1 s, 60 s, ×2.
    public init(initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(60), multiplier: Double = 2) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
    }

    /// The wait before attempt `attempt + 1`, for `attempt` ≥ 1 consecutive failures.
    public func delay(afterFailures attempt: Int) -> Duration {
        let exponent = Double(max(0, attempt - 1))
        let seconds = initialDelay.seconds * pow(multiplier, min(exponent, 64))
        return seconds >= maximumDelay.seconds || !seconds.isFinite ? maximumDelay : .seconds(seconds)
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case initialDelaySeconds, maxDelaySeconds, multiplier }

    /// Old key names, suggested when they are used.
    public static let renamedKeys = ["initialDelay": "initialDelaySeconds", "maxDelay": "maxDelaySeconds"]
    /// The allowed `initialDelaySeconds`.
    public static let initialDelayRange: ClosedRange<Double> = 0.01...3600
    /// The allowed `maxDelaySeconds`: up to a day.
    public static let maxDelayRange: ClosedRange<Double> = 0.01...86_400
    /// The allowed `multiplier`.
    public static let multiplierRange: ClosedRange<Double> = 1...10

    /// `{"initialDelaySeconds": 1, "maxDelaySeconds": 60, "multiplier": 2}`; every number is
    /// range-checked here, because a `Duration` made from an out-of-range number traps.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = ReconnectPolicy()
        let initial = try c.decodeIfPresent(Double.self, forKey: .initialDelaySeconds) ?? defaults.initialDelay.seconds
        let maximum = try c.decodeIfPresent(Double.self, forKey: .maxDelaySeconds) ?? defaults.maximumDelay.seconds
        let multiplier = try c.decodeIfPresent(Double.self, forKey: .multiplier) ?? defaults.multiplier
        func check(_ key: CodingKeys, _ value: Double, _ range: ClosedRange<Double>) throws {
            guard range.contains(value) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: c, debugDescription: PluginConfigurationError.outOfRange(key.stringValue, value, range).reason)
            }
        }
        try check(.initialDelaySeconds, initial, Self.initialDelayRange)
        try check(.maxDelaySeconds, maximum, Self.maxDelayRange)
        try check(.multiplier, multiplier, Self.multiplierRange)
        guard maximum >= initial else {
            throw DecodingError.dataCorruptedError(
                forKey: .maxDelaySeconds, in: c,
                debugDescription: "must be at least initialDelaySeconds (\(ConfigurationDecoder.format(initial)))")
        }
        self.init(initialDelay: .seconds(initial), maximumDelay: .seconds(maximum), multiplier: multiplier)
    }
}

extension ReconnectPolicy: ConfigurationSchemaDeclaring {
    /// `reconnect`'s keys.
    public static var configurationSchema: ConfigurationSchema {
        let defaults = ReconnectPolicy()
        return .object([
            ConfigurationProperty(
                "initialDelaySeconds", .number(initialDelayRange, unit: "seconds"),
                default: .number(defaults.initialDelay.seconds), "The wait after the first failure and after a link loss"),
            ConfigurationProperty(
                "maxDelaySeconds", .number(maxDelayRange, unit: "seconds"), default: .number(defaults.maximumDelay.seconds),
                "The longest wait between attempts; at least initialDelaySeconds"),
            ConfigurationProperty(
                "multiplier", .number(multiplierRange, unit: "times the previous wait"), default: .number(defaults.multiplier),
                "The growth of the wait per consecutive failure"),
        ])
    }
}
