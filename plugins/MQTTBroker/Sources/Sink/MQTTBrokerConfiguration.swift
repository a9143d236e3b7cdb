import FoundationEssentials
public import RemoteSinkKit
public import GatewayRuntime
public import SampleBus

/// How records map to MQTT messages (config key `messages`).
public enum MQTTMessageMode: String, Sendable, Hashable, Encodable, ConfigurationChoice {
    /// One message per record: its HealthJSON object, with its uuid as the user property `uuid`.
    case record
    /// One message per topic and batch: a JSON array of the records' HealthJSON objects, with one
    /// `uuid` user property per record, in the array's order.
    case batch
}

/// The `mqtt` sink's settings. Each key is declared once, in ``configurationKeys``, with its
/// default the value `init()` gives it; decoding is strict (``ConfigurationDecoder``) and
/// ``validated(in:)`` checks every value without side effects.
///
/// The password never appears in the file: it is read from `passwordFile` when the sink starts.
public struct MQTTBrokerConfiguration: Sendable, Hashable, PluginConfigurationContract, RemoteSinkConfiguration,
    RenamedConfigurationKeys
{
    /// The broker's host name or address.
    public var host = ""
    /// The broker's port (1883 for plain MQTT, 8883 for MQTT over TLS by convention).
    public var port = 1883
    /// The first topic level: topics are `{topicPrefix}/{gateway}/{device}/{type}`, where
    /// `gateway` is the configuration's top-level `gatewayName` (else the host name).
    public var topicPrefix = "healthgate"
    /// The MQTT client identifier; nil uses `healthgate-{gateway}-{sink name}`.
    public var clientID: String?
    public var messages = MQTTMessageMode.record
    /// How quantity series travel: as series (every version as it grows, on the type's topic),
    /// or expanded into sample messages once closed (the form of the releases before series).
    public var quantitySeries = QuantitySeriesForm.series
    /// The most changes in one batch (the cursor passes a batch when every PUBACK for it arrived).
    public var batchSize = 100
    /// How many batches may wait for their PUBACKs at once.
    public var maxInFlight = 4
    /// Seconds between keepalive pings.
    public var keepAliveSeconds = 30
    /// Seconds to wait for the PUBACKs of a batch before it counts as failed and is resent.
    public var ackTimeoutSeconds: Double = 30
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
    public var follow = FollowConfiguration()
    /// Backoff between failed batches; its longest delay is also libmosquitto's longest
    /// reconnect delay (rounded up). Longest by default 30 s, not the shared block's 60.
    public var retry = RetryConfiguration().with { $0.maxDelaySeconds = 30 }
    /// Announces every device and quantity to Home Assistant through MQTT discovery (retained
    /// configs under `homeAssistantPrefix`), and removes a sensor when its device's records of
    /// that type are deleted.
    public var homeAssistantDiscovery = false
    /// Home Assistant's discovery prefix.
    public var homeAssistantPrefix = "homeassistant"

    /// Every key at its default (`host` empty: a file must give it).
    public init() {}

    /// The configuration publishing to `host`, every other key at its default.
    public init(host: String) {
        self.host = host
    }

    /// Old key names, suggested when they are used: those every remote sink shares.
    public static var renamedKeys: [String: String] { followingRenamedKeys }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        // Three typed lists, not one expression: Swift 6.0.3 cannot type-check the sum in time.
        let connection: [ConfigurationKey<Self>] = [
            .required("host", \.host, .string(pattern: "^[^/ ]+$"), "The broker's host name or address"),
            ConfigurationKey("port", \.port, .whole(portRange, unit: "TCP port"), "The broker's port (1883 plain, 8883 TLS by convention)"),
            ConfigurationKey(
                "topicPrefix", \.topicPrefix, .string(pattern: "^[^+#/]+(/[^+#/]+)*$"),
                "The first topic levels: topics are {topicPrefix}/{gateway}/{device}/{type}"),
            ConfigurationKey(
                "clientID", \.clientID, .string(minLength: 1, maxLength: 65_535),
                "The MQTT client identifier; absent: healthgate-{gateway}-{sink name}"),
            ConfigurationKey(
                "messages", \.messages, MQTTMessageMode.configurationShape,
                "One message per record, or one array per topic and batch"),
            quantitySeriesKey(\.quantitySeries),
        ]
        let session: [ConfigurationKey<Self>] = [
            ConfigurationKey("keepAliveSeconds", \.keepAliveSeconds, .whole(keepAliveRange, unit: "seconds"), "Seconds between keepalive pings"),
            ConfigurationKey(
                "ackTimeoutSeconds", \.ackTimeoutSeconds, .number(ackTimeoutRange, unit: "seconds"),
                "How long a batch waits for its PUBACKs before it is sent again"),
            ConfigurationKey("username", \.username, .text, "The user name to authenticate with"),
            ConfigurationKey("passwordFile", \.passwordFile, .nonEmptyText, "A file holding the password; needs username"),
            ConfigurationKey("caFile", \.caFile, .nonEmptyText, "A PEM file of the broker's CA: connects with TLS"),
            ConfigurationKey("certFile", \.certFile, .nonEmptyText, "A client certificate (PEM); needs keyFile and caFile"),
            ConfigurationKey("keyFile", \.keyFile, .nonEmptyText, "The client certificate's unencrypted private key (PEM)"),
            ConfigurationKey(
                "homeAssistantDiscovery", \.homeAssistantDiscovery, .boolean,
                "Announce every device and quantity to Home Assistant (MQTT discovery, retained configs)"),
            ConfigurationKey(
                "homeAssistantPrefix", \.homeAssistantPrefix, .string(pattern: "^[^+#/]+(/[^+#/]+)*$"), "Home Assistant's discovery prefix"),
            // An inline secret would end up in backups and `healthgate config` output: refused.
            .refused("password", "secrets are never written inline; use passwordFile"),
        ]
        return connection + followingKeys(batchSize: batchSizeRange, batchInterval: nil) + session
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
        try checkFollowingKeys()
        try Self.checkTopicLevels("topicPrefix", topicPrefix, allowSlash: true)
        try Self.checkTopicLevels("homeAssistantPrefix", homeAssistantPrefix, allowSlash: true)
        if let clientID {
            guard !clientID.isEmpty, clientID.utf8.count <= 65_535 else {
                throw PluginConfigurationError(keyPath: "clientID", reason: "must be 1 to 65535 bytes")
            }
        }
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
