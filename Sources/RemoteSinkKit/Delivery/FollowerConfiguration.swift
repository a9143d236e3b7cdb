public import HealthStore
public import GatewayRuntime

/// The configuration block every remote sink shares for following the store: where a new sink
/// starts, and how far behind it may fall before it skips changes (key `follow`).
///
/// ```json
/// "follow": {"startFrom": "beginning", "maxBytes": 268435456, "maxAgeSeconds": 604800}
/// ```
public struct FollowConfiguration: Sendable, Hashable, Decodable {
    /// Where a sink the store does not know yet starts: every change the store holds
    /// (`beginning`), or only what is stored from now on (`now`).
    public var startFrom: FollowerStart
    /// The most the store keeps for this sink while its receiver is unreachable: the estimated
    /// bytes of the changes it has not acknowledged. Beyond it the oldest changes are skipped
    /// (counted in status, logged once per episode).
    public var maxBytes: Int
    /// The oldest an unacknowledged change may be, in seconds, before it is skipped.
    public var maxAgeSeconds: Double

    public init(startFrom: FollowerStart = .beginning, maxBytes: Int = 256 << 20, maxAgeSeconds: Double = 7 * 86_400) {
        self.startFrom = startFrom
        self.maxBytes = maxBytes
        self.maxAgeSeconds = maxAgeSeconds
    }

    enum CodingKeys: String, CodingKey { case startFrom, maxBytes, maxAgeSeconds }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = FollowConfiguration()
        self.init(
            startFrom: try c.decodeIfPresent(FollowerStart.self, forKey: .startFrom) ?? defaults.startFrom,
            maxBytes: try c.decodeIfPresent(Int.self, forKey: .maxBytes) ?? defaults.maxBytes,
            maxAgeSeconds: try c.decodeIfPresent(Double.self, forKey: .maxAgeSeconds) ?? defaults.maxAgeSeconds)
    }

    /// The allowed `maxBytes`: 4 KiB to 1 TiB.
    public static let bytesRange = 4096...(1 << 40)
    /// The allowed `maxAgeSeconds`: a second to ten years.
    public static let ageRange: ClosedRange<Double> = 1...315_360_000

    /// Checks the values; `prefix` is the block's key path (`follow`).
    public func validate(prefix: String = "follow") throws(PluginConfigurationError) {
        try PluginConfigurationError.check("\(prefix).maxBytes", maxBytes, in: Self.bytesRange, unit: "bytes")
        try PluginConfigurationError.check("\(prefix).maxAgeSeconds", maxAgeSeconds, in: Self.ageRange, unit: "seconds")
    }
}

/// Exponential backoff with jitter after a failed delivery (key `retry`), the same for every
/// remote sink.
public struct RetryConfiguration: Sendable, Hashable, Decodable, RenamedConfigurationKeys {
    /// The first backoff, in seconds; it doubles per failed attempt.
    public var initialDelaySeconds: Double
    /// The longest backoff, in seconds.
    public var maxDelaySeconds: Double
    /// Each delay is multiplied by a random factor in `1 ± jitter`.
    public var jitter: Double

    public init(initialDelaySeconds: Double = 0.5, maxDelaySeconds: Double = 60, jitter: Double = 0.2) {
        self.initialDelaySeconds = initialDelaySeconds
        self.maxDelaySeconds = maxDelaySeconds
        self.jitter = jitter
    }

    /// Old key names, suggested when they are used.
    public static let renamedKeys = [
        "initialDelayMilliseconds": "initialDelaySeconds", "maximumDelayMilliseconds": "maxDelaySeconds",
    ]

    enum CodingKeys: String, CodingKey { case initialDelaySeconds, maxDelaySeconds, jitter }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = RetryConfiguration()
        self.init(
            initialDelaySeconds: try c.decodeIfPresent(Double.self, forKey: .initialDelaySeconds) ?? defaults.initialDelaySeconds,
            maxDelaySeconds: try c.decodeIfPresent(Double.self, forKey: .maxDelaySeconds) ?? defaults.maxDelaySeconds,
            jitter: try c.decodeIfPresent(Double.self, forKey: .jitter) ?? defaults.jitter)
    }

    /// The allowed delays, in seconds: a millisecond to a day.
    public static let delayRange: ClosedRange<Double> = 0.001...86_400

    /// Checks the values; `prefix` is the block's key path (`retry`).
    public func validate(prefix: String = "retry") throws(PluginConfigurationError) {
        try PluginConfigurationError.check("\(prefix).initialDelaySeconds", initialDelaySeconds, in: Self.delayRange, unit: "seconds")
        try PluginConfigurationError.check("\(prefix).maxDelaySeconds", maxDelaySeconds, in: Self.delayRange, unit: "seconds")
        guard maxDelaySeconds >= initialDelaySeconds else {
            throw PluginConfigurationError(
                keyPath: "\(prefix).maxDelaySeconds",
                reason: "must be at least \(prefix).initialDelaySeconds (\(ConfigurationDecoder.format(initialDelaySeconds)))")
        }
        try PluginConfigurationError.check("\(prefix).jitter", jitter, in: Self.jitterRange)
    }

    /// The policy these settings describe.
    public var policy: DeliveryPolicy {
        DeliveryPolicy(initialDelay: .seconds(initialDelaySeconds), maximumDelay: .seconds(maxDelaySeconds), jitter: jitter)
    }
}

/// How a ``Follower`` reads and sends: built by each remote sink from its configuration.
public struct FollowerSettings: Sendable {
    /// The most changes in one batch.
    public var batchSize: Int
    /// How long a batch smaller than `batchSize` waits for more changes before it is sent.
    public var batchInterval: Duration
    /// How many batches may wait for their answer at once; the cursor moves only past the
    /// oldest unanswered one.
    public var maxInFlight: Int
    public var follow: FollowConfiguration
    public var policy: DeliveryPolicy

    public init(batchSize: Int, batchInterval: Duration, maxInFlight: Int, follow: FollowConfiguration, retry: RetryConfiguration) {
        self.batchSize = batchSize
        self.batchInterval = batchInterval
        self.maxInFlight = maxInFlight
        self.follow = follow
        self.policy = retry.policy
    }

    /// The allowed `maxInFlight`.
    public static let inFlightRange = 1...64
    /// The allowed `batchIntervalSeconds`.
    public static let batchIntervalRange: ClosedRange<Double> = 0...3600
}

extension FollowConfiguration: ConfigurationSchemaDeclaring {
    /// `follow`'s keys.
    public static var configurationSchema: ConfigurationSchema {
        let defaults = FollowConfiguration()
        return .object([
            ConfigurationProperty(
                "startFrom", .string(values: FollowerStart.allCases.map(\.rawValue)), default: .string(defaults.startFrom.rawValue),
                "Where a sink the store does not know yet starts: every change the store holds, or what is stored from now on"),
            ConfigurationProperty(
                "maxBytes", .whole(bytesRange, unit: "bytes"), default: .number(Double(defaults.maxBytes)),
                "The most the store keeps for this sink while its receiver is unreachable; beyond it the oldest changes are skipped"),
            ConfigurationProperty(
                "maxAgeSeconds", .number(ageRange, unit: "seconds"), default: .number(defaults.maxAgeSeconds),
                "The oldest an unacknowledged change may be before it is skipped"),
        ])
    }
}

extension RetryConfiguration: ConfigurationSchemaDeclaring {
    /// The allowed `jitter`.
    public static let jitterRange: ClosedRange<Double> = 0...1

    /// `retry`'s keys.
    public static var configurationSchema: ConfigurationSchema {
        let defaults = RetryConfiguration()
        return .object([
            ConfigurationProperty(
                "initialDelaySeconds", .number(delayRange, unit: "seconds"), default: .number(defaults.initialDelaySeconds),
                "The first backoff after a failed delivery; it doubles per failed attempt"),
            ConfigurationProperty(
                "maxDelaySeconds", .number(delayRange, unit: "seconds"), default: .number(defaults.maxDelaySeconds),
                "The longest backoff; at least initialDelaySeconds"),
            ConfigurationProperty(
                "jitter", .number(jitterRange, unit: "fraction of the delay"), default: .number(defaults.jitter),
                "Each delay is multiplied by a random factor in 1 ± jitter"),
        ])
    }
}

extension FollowerSettings {
    /// The keys every remote sink shares for following the store: `batchSize` (with the
    /// sink's own range and default), `batchIntervalSeconds`, `maxInFlight`, `follow` and `retry`.
    /// A sink without a batch interval (it sends what it has at once) passes nil for it; `retry`
    /// is the sink's default when the block is absent.
    public static func sharedProperties(
        batchSize: ClosedRange<Int>, batchSizeDefault: Int, batchIntervalDefault: Double?, maxInFlightDefault: Int,
        retry: RetryConfiguration
    ) -> [ConfigurationProperty] {
        var properties = [
            ConfigurationProperty(
                "batchSize", .whole(batchSize, unit: "records"), default: .number(Double(batchSizeDefault)),
                "The most changes in one batch"),
            ConfigurationProperty(
                "maxInFlight", .whole(inFlightRange, unit: "batches"), default: .number(Double(maxInFlightDefault)),
                "How many batches may wait for their answer at once"),
            ConfigurationProperty("follow", FollowConfiguration.configurationSchema, "Following the store's change log"),
            ConfigurationProperty(
                "retry", RetryConfiguration.configurationSchema,
                default: [
                    "initialDelaySeconds": .number(retry.initialDelaySeconds), "maxDelaySeconds": .number(retry.maxDelaySeconds),
                    "jitter": .number(retry.jitter),
                ], "The backoff after a failed delivery"),
        ]
        if let batchIntervalDefault {
            properties.insert(
                ConfigurationProperty(
                    "batchIntervalSeconds", .number(batchIntervalRange, unit: "seconds"), default: .number(batchIntervalDefault),
                    "How long a batch smaller than batchSize waits for more changes before it is sent"),
                at: 1)
        }
        return properties
    }
}
