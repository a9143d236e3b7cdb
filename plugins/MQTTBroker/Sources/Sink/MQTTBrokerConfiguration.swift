import FoundationEssentials
public import RemoteSinkKit
public import GatewayRuntime
public import SampleBus

/// How records map to MQTT messages (config key `messages`).
public enum MQTTMessageMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// One message per record: its HealthJSON object, with its uuid as the user property `uuid`.
    case record
    /// One message per topic and batch: a JSON array of the records' HealthJSON objects, with one
    /// `uuid` user property per record, in the array's order.
    case batch
}

/// The `mqtt` sink's settings. Every key except `host` has a default, declared once in the
/// memberwise initializers; decoding is strict (``ConfigurationDecoder``) and ``validated(in:)``
/// checks every value without side effects.
///
/// The password never appears in the file: it is read from `passwordFile` when the sink starts.
public struct MQTTBrokerConfiguration: Sendable, Hashable, PluginConfigurationContract, RenamedConfigurationKeys {
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
    /// The most changes in one batch (the cursor passes a batch when every PUBACK for it arrived).
    public var batchSize: Int
    /// How many batches may wait for their PUBACKs at once.
    public var maxInFlight: Int
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
    public var follow: FollowConfiguration
    /// Backoff between failed batches; its longest delay is also libmosquitto's longest
    /// reconnect delay (rounded up).
    public var retry: RetryConfiguration
    /// Announces every device and quantity to Home Assistant through MQTT discovery (retained
    /// configs under `homeAssistantPrefix`), and removes a sensor when its device's records of
    /// that type are deleted.
    public var homeAssistantDiscovery: Bool
    /// Home Assistant's discovery prefix.
    public var homeAssistantPrefix: String

    /// Old key names, suggested when they are used: the outbox is gone (the store is the log
    /// every remote sink follows), and its bounds are the `follow` block's.
    public static let renamedKeys = ["outbox": "follow"]

    public init(
        host: String, port: Int = 1883, topicPrefix: String = "healthgate", clientID: String? = nil,
        messages: MQTTMessageMode = .record, batchSize: Int = 100, maxInFlight: Int = 4, keepAliveSeconds: Int = 30,
        ackTimeoutSeconds: Double = 30, username: String? = nil, passwordFile: String? = nil, caFile: String? = nil,
        certFile: String? = nil, keyFile: String? = nil, follow: FollowConfiguration = FollowConfiguration(),
        retry: RetryConfiguration = RetryConfiguration(maxDelaySeconds: 30), homeAssistantDiscovery: Bool = false,
        homeAssistantPrefix: String = "homeassistant"
    ) {
        self.host = host
        self.port = port
        self.topicPrefix = topicPrefix
        self.clientID = clientID
        self.messages = messages
        self.batchSize = batchSize
        self.maxInFlight = maxInFlight
        self.keepAliveSeconds = keepAliveSeconds
        self.ackTimeoutSeconds = ackTimeoutSeconds
        self.username = username
        self.passwordFile = passwordFile
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
        self.follow = follow
        self.retry = retry
        self.homeAssistantDiscovery = homeAssistantDiscovery
        self.homeAssistantPrefix = homeAssistantPrefix
    }

    enum CodingKeys: String, CodingKey {
        case host, port, topicPrefix, clientID, messages, batchSize, maxInFlight, keepAliveSeconds, ackTimeoutSeconds
        case username, passwordFile, caFile, certFile, keyFile, follow, retry, password
        case homeAssistantDiscovery, homeAssistantPrefix
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
            maxInFlight: try c.decodeIfPresent(Int.self, forKey: .maxInFlight) ?? defaults.maxInFlight,
            keepAliveSeconds: try c.decodeIfPresent(Int.self, forKey: .keepAliveSeconds) ?? defaults.keepAliveSeconds,
            ackTimeoutSeconds: try c.decodeIfPresent(Double.self, forKey: .ackTimeoutSeconds) ?? defaults.ackTimeoutSeconds,
            username: try c.decodeIfPresent(String.self, forKey: .username),
            passwordFile: try c.decodeIfPresent(String.self, forKey: .passwordFile),
            caFile: try c.decodeIfPresent(String.self, forKey: .caFile),
            certFile: try c.decodeIfPresent(String.self, forKey: .certFile),
            keyFile: try c.decodeIfPresent(String.self, forKey: .keyFile),
            follow: try c.decodeIfPresent(FollowConfiguration.self, forKey: .follow) ?? defaults.follow,
            retry: try c.decodeIfPresent(RetryConfiguration.self, forKey: .retry) ?? defaults.retry,
            homeAssistantDiscovery: try c.decodeIfPresent(Bool.self, forKey: .homeAssistantDiscovery) ?? defaults.homeAssistantDiscovery,
            homeAssistantPrefix: try c.decodeIfPresent(String.self, forKey: .homeAssistantPrefix) ?? defaults.homeAssistantPrefix)
    }

    /// The allowed `port`.
    public static let portRange = 1...65_535
    /// The allowed `batchSize`.
    public static let batchSizeRange = 1...10_000
    /// The allowed `keepAliveSeconds` (libmosquitto refuses less than 5).
    public static let keepAliveRange = 5...65_535
    /// The allowed `ackTimeoutSeconds`.
    public static let ackTimeoutRange: ClosedRange<Double> = 0.1...3600

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
        try Self.checkTopicLevels("homeAssistantPrefix", homeAssistantPrefix, allowSlash: true)
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
        try PluginConfigurationError.check("maxInFlight", maxInFlight, in: FollowerSettings.inFlightRange, unit: "batches")
        try follow.validate()
        try retry.validate()
    }

    /// Every key of the `config` object.
    public static var configurationSchema: ConfigurationSchema {
        let defaults = MQTTBrokerConfiguration(host: "")
        return .object(
            [
                ConfigurationProperty("host", .string(pattern: "^[^/ ]+$"), "The broker's host name or address"),
                ConfigurationProperty(
                    "port", .whole(portRange, unit: "TCP port"), default: .number(Double(defaults.port)),
                    "The broker's port (1883 plain, 8883 TLS by convention)"),
                ConfigurationProperty(
                    "topicPrefix", .string(pattern: "^[^+#/]+(/[^+#/]+)*$"), default: .string(defaults.topicPrefix),
                    "The first topic levels: topics are {topicPrefix}/{gateway}/{device}/{type}"),
                ConfigurationProperty(
                    "clientID", .string(minLength: 1, maxLength: 65_535), "The MQTT client identifier; absent: healthgate-{gateway}-{sink name}"),
                ConfigurationProperty(
                    "messages", .string(values: MQTTMessageMode.allCases.map(\.rawValue)), default: .string(defaults.messages.rawValue),
                    "One message per record, or one array per topic and batch"),
            ]
                + FollowerSettings.sharedProperties(
                    batchSize: batchSizeRange, batchSizeDefault: defaults.batchSize, batchIntervalDefault: nil,
                    maxInFlightDefault: defaults.maxInFlight, retry: defaults.retry)
                + [
                    ConfigurationProperty(
                        "keepAliveSeconds", .whole(keepAliveRange, unit: "seconds"), default: .number(Double(defaults.keepAliveSeconds)),
                        "Seconds between keepalive pings"),
                    ConfigurationProperty(
                        "ackTimeoutSeconds", .number(ackTimeoutRange, unit: "seconds"), default: .number(defaults.ackTimeoutSeconds),
                        "How long a batch waits for its PUBACKs before it is sent again"),
                    ConfigurationProperty("username", .text, "The user name to authenticate with"),
                    ConfigurationProperty("passwordFile", .nonEmptyText, "A file holding the password; needs username"),
                    ConfigurationProperty("caFile", .nonEmptyText, "A PEM file of the broker's CA: connects with TLS"),
                    ConfigurationProperty("certFile", .nonEmptyText, "A client certificate (PEM); needs keyFile and caFile"),
                    ConfigurationProperty("keyFile", .nonEmptyText, "The client certificate's unencrypted private key (PEM)"),
                    ConfigurationProperty(
                        "homeAssistantDiscovery", .boolean, default: .bool(defaults.homeAssistantDiscovery),
                        "Announce every device and quantity to Home Assistant (MQTT discovery, retained configs)"),
                    ConfigurationProperty(
                        "homeAssistantPrefix", .string(pattern: "^[^+#/]+(/[^+#/]+)*$"), default: .string(defaults.homeAssistantPrefix),
                        "Home Assistant's discovery prefix"),
                ],
            required: ["host"])
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
