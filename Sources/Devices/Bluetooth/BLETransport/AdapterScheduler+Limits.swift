public import GatewayRuntime

/// `adapterLimits`: `{"connections": 5, "failedAttemptsPerMinute": 30, "inProgressLimit": 5,
/// "silentSeconds": 600}`, every key optional, each declared once here with its range; the
/// defaults are the properties' own.
extension AdapterScheduler.Limits: DeclaredConfiguration {
    /// The allowed `connections`: a controller holds at most 20 LE links in practice.
    public static let connectionsRange = 1...20
    /// The allowed `failedAttemptsPerMinute`.
    public static let failedAttemptsRange = 1...600
    /// The allowed `inProgressLimit`.
    public static let inProgressRange = 2...100
    /// The allowed `silentSeconds`: from half a minute to a day.
    public static let silentRange: ClosedRange<Double> = 30...86_400

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "connections", \.connections, .whole(connectionsRange, unit: "links"),
                "Device slots per adapter: the most links it holds at once"),
            ConfigurationKey(
                "failedAttemptsPerMinute", \.failedAttemptsPerMinute, .whole(failedAttemptsRange, unit: "attempts"),
                "The retry budget: failed connection attempts a minute"),
            ConfigurationKey(
                "inProgressLimit", \.inProgressLimit, .whole(inProgressRange, unit: "answers"),
                "InProgress answers in a row after which the adapter counts as wedged"),
            ConfigurationKey(
                "silentSeconds", \.silentSeconds, .number(silentRange, unit: "seconds"),
                "An adapter with links that delivers nothing this long counts as wedged"),
        ]
    }

    /// Checks every value against its declared range, as a file is checked before it is
    /// decoded; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key under `adapterLimits`.
    public func validate() throws(PluginConfigurationError) {
        do {
            try Self.configurationSchema.check(configurationJSON)
        } catch {
            throw PluginConfigurationError(keyPath: ConfigurationKeyPath.joining("adapterLimits", error.keyPath), reason: error.reason)
        }
    }
}
