import Foundation
public import RemoteOutbox
public import SampleBus

/// How records map to MQTT messages (config key `messages`).
public enum MQTTMessageMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// One message per record: its HealthJSON object, with its uuid as the user property `uuid`.
    case record
    /// One message per topic and outbox batch: a JSON array of the records' HealthJSON objects,
    /// with one `uuid` user property per record, in the array's order.
    case batch
}

/// The `mqtt` sink's settings. Every key except `host` has a default, declared once in the
/// memberwise initializers; decoding is strict (``ConfigurationDecoder``) and ``validated(in:)``
/// checks every value without side effects.
///
/// The password never appears in the file: it is read from `passwordFile` when the sink starts.
public struct MQTTBrokerConfiguration: Sendable, Hashable, PluginConfigurationContract {
    /// The broker's host name or address.
    public var host: String
    /// The broker's port (1883 for plain MQTT, 8883 for MQTT over TLS by convention).
    public var port: Int
    /// The first topic level: topics are `{topicPrefix}/{gateway}/{device}/{type}`, where
    /// `gateway` is the configuration's top-level `gatewayName` (else the host name).
    public var topicPrefix: String
    /// The MQTT client identifier; nil uses `healthgate-{gateway}-{sink name}`.
    public var clientID: String?
    public var messages: MQTTMessageMode
    /// The most records in one outbox batch (which leaves the outbox when every PUBACK for it
    /// arrived).
    public var batchSize: Int
    /// Seconds between keepalive pings.
    public var keepAliveSeconds: Int
    /// Seconds to wait for the PUBACKs of a batch before it counts as failed and is resent.
    public var ackTimeoutSeconds: Double
    /// Authenticates with this user name (and the password in `passwordFile`).
    public var username: String?
    /// A file holding the password (trailing whitespace is ignored); needs `username`.
    public var passwordFile: String?
    /// A PEM file of the CA that signed the broker's certificate: connects with TLS.
    public var caFile: String?
    /// A PEM file of the gateway's client certificate, shown to a broker that requires one
    /// (`require_certificate`); needs `keyFile` and `caFile`.
    public var certFile: String?
    /// The unencrypted PEM private key of `certFile` (readable by the gateway only).
    public var keyFile: String?
    public var outbox: Outbox
    public var retry: Retry

    /// Outbox bounds.
    public struct Outbox: Sendable, Hashable, Decodable {
        /// The most bytes of pending records (their stored JSON).
        public var maxBytes: Int
        /// The oldest a pending record may be, in seconds.
        public var maxAgeSeconds: Double
        public var policy: OutboxPolicy

        public init(maxBytes: Int = 256 << 20, maxAgeSeconds: Double = 7 * 86_400, policy: OutboxPolicy = .block) {
            self.maxBytes = maxBytes
            self.maxAgeSeconds = maxAgeSeconds
            self.policy = policy
        }

        enum CodingKeys: String, CodingKey { case maxBytes, maxAgeSeconds, policy }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Outbox()
            self.init(
                maxBytes: try c.decodeIfPresent(Int.self, forKey: .maxBytes) ?? defaults.maxBytes,
                maxAgeSeconds: try c.decodeIfPresent(Double.self, forKey: .maxAgeSeconds) ?? defaults.maxAgeSeconds,
                policy: try c.decodeIfPresent(OutboxPolicy.self, forKey: .policy) ?? defaults.policy)
        }
    }

    /// Exponential backoff between failed batches, and libmosquitto's reconnect delays.
    public struct Retry: Sendable, Hashable, Decodable {
        /// The first backoff, in seconds; it doubles per failed attempt.
        public var initialDelaySeconds: Double
        /// The longest backoff, in seconds (also the longest reconnect delay, rounded up).
        public var maxDelaySeconds: Double

        public init(initialDelaySeconds: Double = 0.5, maxDelaySeconds: Double = 30) {
            self.initialDelaySeconds = initialDelaySeconds
            self.maxDelaySeconds = maxDelaySeconds
        }

        enum CodingKeys: String, CodingKey { case initialDelaySeconds, maxDelaySeconds }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Retry()
            self.init(
                initialDelaySeconds: try c.decodeIfPresent(Double.self, forKey: .initialDelaySeconds) ?? defaults.initialDelaySeconds,
                maxDelaySeconds: try c.decodeIfPresent(Double.self, forKey: .maxDelaySeconds) ?? defaults.maxDelaySeconds)
        }
    }

    public init(
        host: String, port: Int = 1883, topicPrefix: String = "healthgate", clientID: String? = nil,
        messages: MQTTMessageMode = .record, batchSize: Int = 100, keepAliveSeconds: Int = 30, ackTimeoutSeconds: Double = 30,
        username: String? = nil, passwordFile: String? = nil, caFile: String? = nil, certFile: String? = nil,
        keyFile: String? = nil, outbox: Outbox = Outbox(), retry: Retry = Retry()
    ) {
        self.host = host
        self.port = port
        self.topicPrefix = topicPrefix
        self.clientID = clientID
        self.messages = messages
        self.batchSize = batchSize
        self.keepAliveSeconds = keepAliveSeconds
        self.ackTimeoutSeconds = ackTimeoutSeconds
        self.username = username
        self.passwordFile = passwordFile
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
        self.outbox = outbox
        self.retry = retry
    }

    enum CodingKeys: String, CodingKey {
        case host, port, topicPrefix, clientID, messages, batchSize, keepAliveSeconds, ackTimeoutSeconds
        case username, passwordFile, caFile, certFile, keyFile, outbox, retry, password
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // An inline secret would end up in backups and `healthgate config` output: refuse it.
        if c.contains(.password) {
            throw DecodingError.dataCorruptedError(
                forKey: .password, in: c, debugDescription: "secrets are never written inline; use passwordFile")
        }
        let defaults = MQTTBrokerConfiguration(host: "")
        self.init(
            host: try c.decode(String.self, forKey: .host),
            port: try c.decodeIfPresent(Int.self, forKey: .port) ?? defaults.port,
            topicPrefix: try c.decodeIfPresent(String.self, forKey: .topicPrefix) ?? defaults.topicPrefix,
            clientID: try c.decodeIfPresent(String.self, forKey: .clientID),
            messages: try c.decodeIfPresent(MQTTMessageMode.self, forKey: .messages) ?? defaults.messages,
            batchSize: try c.decodeIfPresent(Int.self, forKey: .batchSize) ?? defaults.batchSize,
            keepAliveSeconds: try c.decodeIfPresent(Int.self, forKey: .keepAliveSeconds) ?? defaults.keepAliveSeconds,
            ackTimeoutSeconds: try c.decodeIfPresent(Double.self, forKey: .ackTimeoutSeconds) ?? defaults.ackTimeoutSeconds,
            username: try c.decodeIfPresent(String.self, forKey: .username),
            passwordFile: try c.decodeIfPresent(String.self, forKey: .passwordFile),
            caFile: try c.decodeIfPresent(String.self, forKey: .caFile),
            certFile: try c.decodeIfPresent(String.self, forKey: .certFile),
            keyFile: try c.decodeIfPresent(String.self, forKey: .keyFile),
            outbox: try c.decodeIfPresent(Outbox.self, forKey: .outbox) ?? defaults.outbox,
            retry: try c.decodeIfPresent(Retry.self, forKey: .retry) ?? defaults.retry)
    }

    /// The allowed `port`.
    public static let portRange = 1...65_535
    /// The allowed `batchSize`.
    public static let batchSizeRange = 1...10_000
    /// The allowed `keepAliveSeconds` (libmosquitto refuses less than 5).
    public static let keepAliveRange = 5...65_535
    /// The allowed `ackTimeoutSeconds`.
    public static let ackTimeoutRange: ClosedRange<Double> = 0.1...3600
    /// The allowed `outbox.maxBytes`: 4 KiB to 1 TiB.
    public static let outboxBytesRange = 4096...(1 << 40)
    /// The allowed `outbox.maxAgeSeconds`: up to ten years.
    public static let outboxAgeRange: ClosedRange<Double> = 1...315_360_000
    /// The allowed retry delays, in seconds: up to an hour.
    public static let retryDelayRange: ClosedRange<Double> = 0.001...3600

    /// The checks of ``validated()``; the settings are the configuration itself.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> MQTTBrokerConfiguration {
        try validated()
        return self
    }

    /// Checks every value that decodes but cannot work. Opens and creates nothing.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    func validated() throws(PluginConfigurationError) {
        guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == " " }) else {
            throw PluginConfigurationError(keyPath: "host", reason: "\"\(host)\" is not a host name or address")
        }
        try PluginConfigurationError.check("port", port, in: Self.portRange)
        try Self.checkTopicLevels("topicPrefix", topicPrefix, allowSlash: true)
        if let clientID {
            guard !clientID.isEmpty, clientID.utf8.count <= 65_535 else {
                throw PluginConfigurationError(keyPath: "clientID", reason: "must be 1 to 65535 bytes")
            }
        }
        try PluginConfigurationError.check("batchSize", batchSize, in: Self.batchSizeRange, unit: "records")
        try PluginConfigurationError.check("keepAliveSeconds", keepAliveSeconds, in: Self.keepAliveRange, unit: "seconds")
        try PluginConfigurationError.check("ackTimeoutSeconds", ackTimeoutSeconds, in: Self.ackTimeoutRange, unit: "seconds")
        if passwordFile != nil, username == nil {
            throw PluginConfigurationError(keyPath: "passwordFile", reason: "needs username")
        }
        if (certFile == nil) != (keyFile == nil) {
            throw PluginConfigurationError(
                keyPath: certFile == nil ? "certFile" : "keyFile", reason: "certFile and keyFile go together (a client certificate and its key)")
        }
        if certFile != nil, caFile == nil {
            throw PluginConfigurationError(keyPath: "caFile", reason: "a client certificate (certFile) needs TLS: set caFile")
        }
        for (key, path) in [("passwordFile", passwordFile), ("caFile", caFile), ("certFile", certFile), ("keyFile", keyFile)] {
            if let path, !FileManager.default.isReadableFile(atPath: path) {
                throw PluginConfigurationError(keyPath: key, reason: "\(path) does not exist or is not readable")
            }
        }
        try PluginConfigurationError.check("outbox.maxBytes", outbox.maxBytes, in: Self.outboxBytesRange, unit: "bytes")
        try PluginConfigurationError.check("outbox.maxAgeSeconds", outbox.maxAgeSeconds, in: Self.outboxAgeRange, unit: "seconds")
        try PluginConfigurationError.check("retry.initialDelaySeconds", retry.initialDelaySeconds, in: Self.retryDelayRange, unit: "seconds")
        try PluginConfigurationError.check("retry.maxDelaySeconds", retry.maxDelaySeconds, in: Self.retryDelayRange, unit: "seconds")
        guard retry.maxDelaySeconds >= retry.initialDelaySeconds else {
            throw PluginConfigurationError(
                keyPath: "retry.maxDelaySeconds",
                reason: "must be at least retry.initialDelaySeconds (\(ConfigurationDecoder.format(retry.initialDelaySeconds)))")
        }
    }

    /// A topic level (or, for the prefix, levels) must be non-empty and free of the wildcards
    /// `+` and `#`, which a PUBLISH topic may not contain.
    private static func checkTopicLevels(_ key: String, _ value: String, allowSlash: Bool) throws(PluginConfigurationError) {
        guard !value.isEmpty, !value.contains(where: { $0 == "+" || $0 == "#" || $0 == "\0" }),
            allowSlash || !value.contains("/"), !value.split(separator: "/", omittingEmptySubsequences: false).contains("")
        else {
            throw PluginConfigurationError(
                keyPath: key,
                reason: "\"\(value)\" is not a topic level: it must be non-empty, without + or #"
                    + (allowSlash ? " or empty levels" : " or /"))
        }
    }
}
