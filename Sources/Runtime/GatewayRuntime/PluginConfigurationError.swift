/// A configuration value that decodes but cannot work, reported with the key that is wrong.
public struct PluginConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The key path inside the plugin's `config` object, e.g. `devices[0].address`.
    public var keyPath: String
    /// What is wrong, with the allowed values or range where there are any.
    public var reason: String

    /// An error at `keyPath` (empty: the whole object, shown as
    /// ``ConfigurationKeyPath/topLevel``); credentials in any URL inside `reason` are redacted.
    public init(keyPath: String, reason: String) {
        self.keyPath = ConfigurationKeyPath.rendered(keyPath)
        self.reason = CredentialRedaction.redact(reason)
    }

    /// "must be between LOWER and UPPER, got VALUE": a number outside its allowed range.
    public static func outOfRange(
        _ keyPath: String, _ value: Double, _ range: ClosedRange<Double>, unit: String = ""
    ) -> PluginConfigurationError {
        let suffix = unit.isEmpty ? "" : " \(unit)"
        return PluginConfigurationError(
            keyPath: keyPath,
            reason: "out of range: \(ConfigurationDecoder.format(value)); allowed \(ConfigurationDecoder.format(range.lowerBound))"
                + "…\(ConfigurationDecoder.format(range.upperBound))\(suffix)")
    }

    /// Checks that `value` lies in `range`.
    public static func check(
        _ keyPath: String, _ value: Double, in range: ClosedRange<Double>, unit: String = ""
    ) throws(PluginConfigurationError) {
        guard range.contains(value) else { throw outOfRange(keyPath, value, range, unit: unit) }
    }

    /// Checks that `value` lies in `range`.
    public static func check(
        _ keyPath: String, _ value: Int, in range: ClosedRange<Int>, unit: String = ""
    ) throws(PluginConfigurationError) {
        guard range.contains(value) else {
            throw outOfRange(keyPath, Double(value), Double(range.lowerBound)...Double(range.upperBound), unit: unit)
        }
    }

    public var description: String { "\(ConfigurationKeyPath.rendered(keyPath)): \(reason)" }
}
