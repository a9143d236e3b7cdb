import FoundationEssentials
public import GatewayRuntime
#if canImport(Glibc)
import Glibc
#endif

/// Reconnect backoff (key `reconnect`): the n-th consecutive failed attempt waits
/// `initialDelay × multiplierⁿ⁻¹`, capped at `maximumDelay`. Attempts never stop.
public struct ReconnectPolicy: Sendable, Hashable, DeclaredConfiguration, RenamedConfigurationKeys {
    /// The wait after the first failure (and after a link loss), in seconds.
    public var initialDelaySeconds: Double = 1
    /// The longest wait, in seconds.
    public var maxDelaySeconds: Double = 60
    /// The growth factor per consecutive failure (≥ 1).
    public var multiplier: Double = 2

    /// The policy with every default: 1 s, 60 s, ×2.
    public init() {}

    /// A policy from its waits; a value not given keeps its default.
    public init(initialDelay: Duration? = nil, maximumDelay: Duration? = nil, multiplier: Double? = nil) {
        if let initialDelay { initialDelaySeconds = initialDelay.seconds }
        if let maximumDelay { maxDelaySeconds = maximumDelay.seconds }
        if let multiplier { self.multiplier = multiplier }
    }

    /// The wait after the first failure. The seconds are range-checked when decoded
    /// (``checkDecoded()``), since a `Duration` made from a number out of range traps.
    public var initialDelay: Duration { .seconds(initialDelaySeconds) }
    /// The longest wait.
    public var maximumDelay: Duration { .seconds(maxDelaySeconds) }

    /// The wait before attempt `attempt + 1`, for `attempt` ≥ 1 consecutive failures.
    public func delay(afterFailures attempt: Int) -> Duration {
        let exponent = Double(max(0, attempt - 1))
        let seconds = initialDelaySeconds * pow(multiplier, min(exponent, 64))
        return seconds >= maxDelaySeconds || !seconds.isFinite ? maximumDelay : .seconds(seconds)
    }

    /// Old key names, suggested when they are used.
    public static let renamedKeys = ["initialDelay": "initialDelaySeconds", "maxDelay": "maxDelaySeconds"]
    /// The allowed `initialDelaySeconds`.
    public static let initialDelayRange: ClosedRange<Double> = 0.01...3600
    /// The allowed `maxDelaySeconds`: up to a day.
    public static let maxDelayRange: ClosedRange<Double> = 0.01...86_400
    /// The allowed `multiplier`.
    public static let multiplierRange: ClosedRange<Double> = 1...10

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "initialDelaySeconds", \.initialDelaySeconds, .number(initialDelayRange, unit: "seconds"),
                "The wait after the first failure and after a link loss"),
            ConfigurationKey(
                "maxDelaySeconds", \.maxDelaySeconds, .number(maxDelayRange, unit: "seconds"),
                "The longest wait between attempts; at least initialDelaySeconds"),
            ConfigurationKey(
                "multiplier", \.multiplier, .number(multiplierRange, unit: "times the previous wait"),
                "The growth of the wait per consecutive failure"),
        ]
    }

    /// The declared ranges, and `maxDelaySeconds` at least `initialDelaySeconds`: checked as
    /// soon as the block is decoded, so no policy out of range reaches a `Duration`.
    public func checkDecoded() throws(PluginConfigurationError) {
        try Self.configurationSchema.check(configurationJSON)
        guard maxDelaySeconds >= initialDelaySeconds else {
            throw PluginConfigurationError(
                keyPath: "maxDelaySeconds",
                reason: "must be at least initialDelaySeconds (\(ConfigurationDecoder.format(initialDelaySeconds)))")
        }
    }
}
