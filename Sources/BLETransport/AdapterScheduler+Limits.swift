public import GatewayRuntime

extension AdapterScheduler.Limits: Codable {
    /// The allowed `connections`: a controller holds at most 20 LE links in practice.
    public static let connectionsRange = 1...20
    /// The allowed `failedAttemptsPerMinute`.
    public static let failedAttemptsRange = 1...600
    /// The allowed `inProgressLimit`.
    public static let inProgressRange = 2...100
    /// The allowed `silentSeconds`: from half a minute to a day.
    public static let silentRange: ClosedRange<Double> = 30...86_400

    enum CodingKeys: String, CodingKey, CaseIterable { case connections, failedAttemptsPerMinute, inProgressLimit, silentSeconds }

    /// `{"connections": 5, "failedAttemptsPerMinute": 30, "inProgressLimit": 5, "silentSeconds": 600}`,
    /// every key optional and range-checked.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = AdapterScheduler.Limits()
        self.init(
            connections: try c.decodeIfPresent(Int.self, forKey: .connections) ?? defaults.connections,
            failedAttemptsPerMinute: try c.decodeIfPresent(Int.self, forKey: .failedAttemptsPerMinute) ?? defaults.failedAttemptsPerMinute,
            inProgressLimit: try c.decodeIfPresent(Int.self, forKey: .inProgressLimit) ?? defaults.inProgressLimit,
            silentSeconds: try c.decodeIfPresent(Double.self, forKey: .silentSeconds) ?? defaults.silentSeconds)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(connections, forKey: .connections)
        try c.encode(failedAttemptsPerMinute, forKey: .failedAttemptsPerMinute)
        try c.encode(inProgressLimit, forKey: .inProgressLimit)
        try c.encode(silentSeconds, forKey: .silentSeconds)
    }

    /// Checks every value; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key under `adapterLimits`.
    public func validate() throws(PluginConfigurationError) {
        try PluginConfigurationError.check("adapterLimits.connections", connections, in: Self.connectionsRange, unit: "links")
        try PluginConfigurationError.check(
            "adapterLimits.failedAttemptsPerMinute", failedAttemptsPerMinute, in: Self.failedAttemptsRange, unit: "attempts")
        try PluginConfigurationError.check("adapterLimits.inProgressLimit", inProgressLimit, in: Self.inProgressRange, unit: "answers")
        try PluginConfigurationError.check("adapterLimits.silentSeconds", silentSeconds, in: Self.silentRange, unit: "seconds")
    }
}

extension AdapterScheduler.Limits: ConfigurationSchemaDeclaring {
    /// `adapterLimits`' keys.
    public static var configurationSchema: ConfigurationSchema {
        let defaults = AdapterScheduler.Limits()
        return .object([
            ConfigurationProperty(
                "connections", .whole(connectionsRange, unit: "links"), default: .number(Double(defaults.connections)),
                "Device slots per adapter: the most links it holds at once"),
            ConfigurationProperty(
                "failedAttemptsPerMinute", .whole(failedAttemptsRange, unit: "attempts"),
                default: .number(Double(defaults.failedAttemptsPerMinute)), "The retry budget: failed connection attempts a minute"),
            ConfigurationProperty(
                "inProgressLimit", .whole(inProgressRange, unit: "answers"), default: .number(Double(defaults.inProgressLimit)),
                "InProgress answers in a row after which the adapter counts as wedged"),
            ConfigurationProperty(
                "silentSeconds", .number(silentRange, unit: "seconds"), default: .number(defaults.silentSeconds),
                "An adapter with links that delivers nothing this long counts as wedged"),
        ])
    }
}

/// The gateway's `bluetooth` block: what holds for every adapter, whichever sources use it.
///
/// ```json
/// "bluetooth": {"adapterLimits": {"connections": 7, "failedAttemptsPerMinute": 30}}
/// ```
public struct BluetoothSettings: Sendable, Hashable, Codable {
    /// Every adapter's limits (each key optional, defaults as ``AdapterScheduler/Limits/init()``).
    public var adapterLimits: AdapterScheduler.Limits

    public init(adapterLimits: AdapterScheduler.Limits = AdapterScheduler.Limits()) {
        self.adapterLimits = adapterLimits
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case adapterLimits }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        adapterLimits = try c.decodeIfPresent(AdapterScheduler.Limits.self, forKey: .adapterLimits) ?? AdapterScheduler.Limits()
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(adapterLimits, forKey: .adapterLimits)
    }

    /// The `bluetooth` block's declared keys, for the configuration file's schema.
    public static var configurationSchema: ConfigurationSchema {
        .object([
            ConfigurationProperty(
                "adapterLimits", AdapterScheduler.Limits.configurationSchema,
                "Every Bluetooth adapter's limits, shared by every source on it"),
        ])
    }
}
