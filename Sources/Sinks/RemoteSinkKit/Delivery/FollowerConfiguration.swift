public import HealthStore
public import GatewayRuntime

/// The configuration block every remote sink shares for following the store: where a new sink
/// starts, and how far behind it may fall before it skips changes (key `follow`).
///
/// ```json
/// "follow": {"startFrom": "beginning", "maxBytes": 268435456, "maxAgeSeconds": 604800}
/// ```
public struct FollowConfiguration: Sendable, Hashable, DeclaredConfiguration {
    /// Where a sink the store does not know yet starts: every change the store holds
    /// (`beginning`), or only what is stored from now on (`now`).
    public var startFrom = FollowerStart.beginning
    /// The most the store keeps for this sink while its receiver is unreachable: the estimated
    /// bytes of the changes it has not acknowledged. Beyond it the oldest changes are skipped
    /// (counted in status, logged once per episode).
    public var maxBytes = 256 << 20
    /// The oldest an unacknowledged change may be, in seconds, before it is skipped.
    public var maxAgeSeconds: Double = 7 * 86_400

    /// Every key at its default.
    public init() {}

    public init(startFrom: FollowerStart, maxBytes: Int, maxAgeSeconds: Double) {
        self.startFrom = startFrom
        self.maxBytes = maxBytes
        self.maxAgeSeconds = maxAgeSeconds
    }

    /// The allowed `maxBytes`: 4 KiB to 1 TiB.
    public static let bytesRange = 4096...(1 << 40)
    /// The allowed `maxAgeSeconds`: a second to ten years.
    public static let ageRange: ClosedRange<Double> = 1...315_360_000

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "startFrom", \.startFrom, .string(values: FollowerStart.allCases.map(\.rawValue)),
                "Where a sink the store does not know yet starts: every change the store holds, or what is stored from now on"),
            ConfigurationKey(
                "maxBytes", \.maxBytes, .whole(bytesRange, unit: "bytes"),
                "The most the store keeps for this sink while its receiver is unreachable; beyond it the oldest changes are skipped"),
            ConfigurationKey(
                "maxAgeSeconds", \.maxAgeSeconds, .number(ageRange, unit: "seconds"),
                "The oldest an unacknowledged change may be before it is skipped"),
        ]
    }
}

extension FollowerStart: ConfigurationValue {}

/// Exponential backoff with jitter after a failed delivery (key `retry`), the same for every
/// remote sink.
public struct RetryConfiguration: Sendable, Hashable, DeclaredConfiguration, RenamedConfigurationKeys {
    /// The first backoff, in seconds; it doubles per failed attempt.
    public var initialDelaySeconds = 0.5
    /// The longest backoff, in seconds.
    public var maxDelaySeconds: Double = 60
    /// Each delay is multiplied by a random factor in `1 ± jitter`.
    public var jitter = 0.2

    /// Every key at its default.
    public init() {}

    public init(initialDelaySeconds: Double, maxDelaySeconds: Double, jitter: Double) {
        self.initialDelaySeconds = initialDelaySeconds
        self.maxDelaySeconds = maxDelaySeconds
        self.jitter = jitter
    }

    /// Old key names, suggested when they are used.
    public static let renamedKeys = [
        "initialDelayMilliseconds": "initialDelaySeconds", "maximumDelayMilliseconds": "maxDelaySeconds",
    ]

    /// The allowed delays, in seconds: a millisecond to a day.
    public static let delayRange: ClosedRange<Double> = 0.001...86_400
    /// The allowed `jitter`.
    public static let jitterRange: ClosedRange<Double> = 0...1

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "initialDelaySeconds", \.initialDelaySeconds, .number(delayRange, unit: "seconds"),
                "The first backoff after a failed delivery; it doubles per failed attempt"),
            ConfigurationKey(
                "maxDelaySeconds", \.maxDelaySeconds, .number(delayRange, unit: "seconds"), "The longest backoff; at least initialDelaySeconds"),
            ConfigurationKey(
                "jitter", \.jitter, .number(jitterRange, unit: "fraction of the delay"),
                "Each delay is multiplied by a random factor in 1 ± jitter"),
        ]
    }

    /// Checks what ties the keys together (their ranges are declared); `prefix` is the block's
    /// key path (`retry`).
    public func validate(prefix: String = "retry") throws(PluginConfigurationError) {
        guard maxDelaySeconds >= initialDelaySeconds else {
            throw PluginConfigurationError(
                keyPath: "\(prefix).maxDelaySeconds",
                reason: "must be at least \(prefix).initialDelaySeconds (\(ConfigurationDecoder.format(initialDelaySeconds)))")
        }
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
