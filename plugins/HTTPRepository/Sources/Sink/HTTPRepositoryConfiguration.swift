public import Foundation
public import RemoteOutbox
public import SampleBus

/// The payload format a repository expects (config key `format`).
public enum RepositoryFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// A HealthJSON batch: `{"correlations": […], "heartbeatSeries": […], "samples": […], "workouts": […]}`
    /// (see openapi.yaml).
    case native
    /// A FHIR R4 transaction Bundle of Observations, one conditional create per sample.
    case fhirR4 = "fhir-r4"
    /// An array of Open mHealth data points.
    case openMHealth = "openmhealth"
}

/// The `http-repository` sink's settings. Every key except `url` has a default, declared once in
/// the memberwise initializers; decoding is strict (``ConfigurationDecoder``) and
/// ``validated(in:)`` checks every value without side effects.
///
/// Secrets never appear in the file: a bearer token or a basic-auth password is read from a file
/// (`tokenFile`, `passwordFile`) or from an environment variable named here (`tokenVariable`,
/// `passwordVariable`).
public struct HTTPRepositoryConfiguration: Sendable, Hashable, PluginConfigurationContract, RenamedConfigurationKeys {
    /// The endpoint every request is POSTed to. The only URL the sink contacts; redirects are
    /// never followed.
    public var url: String
    public var format: RepositoryFormat
    /// The most samples in one request.
    public var batchSize: Int
    /// How long a partial batch may wait for more samples before it is sent, in seconds.
    public var batchIntervalSeconds: Double
    /// Whether request bodies are gzip-compressed (`Content-Encoding: gzip`).
    public var gzip: Bool
    /// Seconds before a request times out (counts as a retryable failure).
    public var timeoutSeconds: Double
    public var outbox: Outbox
    public var retry: Retry
    public var auth: Auth
    /// For `fhir-r4`: the subject of every Observation, e.g. `Patient/123`.
    public var patientReference: String?
    /// A PEM file of trusted root certificates for an `https` URL (a private repository's CA).
    /// It replaces the system trust store (libcurl's `CURLOPT_CAINFO`); nil trusts the system
    /// store. Must be readable and needs an `https` URL, or ``validated()`` refuses it.
    public var caFile: String?
    /// Allows credentials (bearer or basic auth) over plain `http://` to a host that is not
    /// loopback. Off by default: such a request carries the secret in clear text over the network.
    public var allowInsecureTransport: Bool

    /// Old key names, suggested when they are used.
    public static let renamedKeys = ["batchIntervalMilliseconds": "batchIntervalSeconds"]

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

    /// Exponential backoff with jitter.
    public struct Retry: Sendable, Hashable, Decodable, RenamedConfigurationKeys {
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
            let defaults = Retry()
            self.init(
                initialDelaySeconds: try c.decodeIfPresent(Double.self, forKey: .initialDelaySeconds) ?? defaults.initialDelaySeconds,
                maxDelaySeconds: try c.decodeIfPresent(Double.self, forKey: .maxDelaySeconds) ?? defaults.maxDelaySeconds,
                jitter: try c.decodeIfPresent(Double.self, forKey: .jitter) ?? defaults.jitter)
        }
    }

    /// How the sink authenticates.
    public struct Auth: Sendable, Hashable, Decodable {
        public enum Kind: String, Sendable, Hashable, Decodable, CaseIterable { case none, bearer, basic }
        public var type: Kind
        /// Bearer: a file holding the token (trailing whitespace is ignored).
        public var tokenFile: String?
        /// Bearer: the environment variable holding the token.
        public var tokenVariable: String?
        /// Basic: the user name (not a secret).
        public var username: String?
        /// Basic: a file holding the password.
        public var passwordFile: String?
        /// Basic: the environment variable holding the password.
        public var passwordVariable: String?

        public init(
            type: Kind = .none, tokenFile: String? = nil, tokenVariable: String? = nil, username: String? = nil,
            passwordFile: String? = nil, passwordVariable: String? = nil
        ) {
            self.type = type
            self.tokenFile = tokenFile
            self.tokenVariable = tokenVariable
            self.username = username
            self.passwordFile = passwordFile
            self.passwordVariable = passwordVariable
        }

        enum CodingKeys: String, CodingKey {
            case type, tokenFile, tokenVariable, username, passwordFile, passwordVariable, token, password
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            // An inline secret would end up in backups and `healthgate config` output: refuse it.
            for key in [CodingKeys.token, .password] where c.contains(key) {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: c,
                    debugDescription: "secrets are never written inline; use \(key.stringValue)File or \(key.stringValue)Variable")
            }
            self.init(
                type: try c.decodeIfPresent(Kind.self, forKey: .type) ?? .none,
                tokenFile: try c.decodeIfPresent(String.self, forKey: .tokenFile),
                tokenVariable: try c.decodeIfPresent(String.self, forKey: .tokenVariable),
                username: try c.decodeIfPresent(String.self, forKey: .username),
                passwordFile: try c.decodeIfPresent(String.self, forKey: .passwordFile),
                passwordVariable: try c.decodeIfPresent(String.self, forKey: .passwordVariable))
        }
    }

    public init(
        url: String, format: RepositoryFormat = .native, batchSize: Int = 500, batchIntervalSeconds: Double = 1,
        gzip: Bool = true, timeoutSeconds: Double = 30, outbox: Outbox = Outbox(), retry: Retry = Retry(),
        auth: Auth = Auth(), patientReference: String? = nil, caFile: String? = nil, allowInsecureTransport: Bool = false
    ) {
        self.url = url
        self.format = format
        self.batchSize = batchSize
        self.batchIntervalSeconds = batchIntervalSeconds
        self.gzip = gzip
        self.timeoutSeconds = timeoutSeconds
        self.outbox = outbox
        self.retry = retry
        self.auth = auth
        self.patientReference = patientReference
        self.caFile = caFile
        self.allowInsecureTransport = allowInsecureTransport
    }

    enum CodingKeys: String, CodingKey {
        case url, format, batchSize, batchIntervalSeconds, gzip, timeoutSeconds, outbox, retry, auth
        case patientReference, caFile, allowInsecureTransport
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = HTTPRepositoryConfiguration(url: "")
        self.init(
            url: try c.decode(String.self, forKey: .url),
            format: try c.decodeIfPresent(RepositoryFormat.self, forKey: .format) ?? defaults.format,
            batchSize: try c.decodeIfPresent(Int.self, forKey: .batchSize) ?? defaults.batchSize,
            batchIntervalSeconds: try c.decodeIfPresent(Double.self, forKey: .batchIntervalSeconds) ?? defaults.batchIntervalSeconds,
            gzip: try c.decodeIfPresent(Bool.self, forKey: .gzip) ?? defaults.gzip,
            timeoutSeconds: try c.decodeIfPresent(Double.self, forKey: .timeoutSeconds) ?? defaults.timeoutSeconds,
            outbox: try c.decodeIfPresent(Outbox.self, forKey: .outbox) ?? defaults.outbox,
            retry: try c.decodeIfPresent(Retry.self, forKey: .retry) ?? defaults.retry,
            auth: try c.decodeIfPresent(Auth.self, forKey: .auth) ?? defaults.auth,
            patientReference: try c.decodeIfPresent(String.self, forKey: .patientReference),
            caFile: try c.decodeIfPresent(String.self, forKey: .caFile),
            allowInsecureTransport:
                try c.decodeIfPresent(Bool.self, forKey: .allowInsecureTransport) ?? defaults.allowInsecureTransport)
    }

    /// The allowed `batchSize`.
    public static let batchSizeRange = 1...100_000
    /// The allowed `batchIntervalSeconds`.
    public static let batchIntervalRange: ClosedRange<Double> = 0...3600
    /// The allowed `timeoutSeconds`.
    public static let timeoutRange: ClosedRange<Double> = 0.001...3600
    /// The allowed `outbox.maxBytes`: 4 KiB to 1 TiB.
    public static let outboxBytesRange = 4096...(1 << 40)
    /// The allowed `outbox.maxAgeSeconds`: up to ten years.
    public static let outboxAgeRange: ClosedRange<Double> = 1...315_360_000
    /// The allowed retry delays, in seconds: up to a day.
    public static let retryDelayRange: ClosedRange<Double> = 0.001...86_400

    /// The checks of ``validated()``; the settings are the configuration itself.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> HTTPRepositoryConfiguration {
        _ = try validated()
        return self
    }

    /// Checks every value that decodes but cannot work, and that referenced files (`caFile`,
    /// `auth.tokenFile`, `auth.passwordFile`) are readable. Creates and opens nothing.
    /// - Returns: the endpoint URL.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    func validated() throws(PluginConfigurationError) -> URL {
        guard let endpoint = URL(string: url), let scheme = endpoint.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = endpoint.host, !host.isEmpty
        else {
            throw PluginConfigurationError(keyPath: "url", reason: "\"\(url)\" is not an http:// or https:// URL")
        }
        guard endpoint.user == nil, endpoint.password == nil else {
            throw PluginConfigurationError(
                keyPath: "url", reason: "credentials in the URL are not allowed; use auth.passwordFile or auth.passwordVariable")
        }
        try PluginConfigurationError.check("batchSize", batchSize, in: Self.batchSizeRange, unit: "records")
        try PluginConfigurationError.check("batchIntervalSeconds", batchIntervalSeconds, in: Self.batchIntervalRange, unit: "seconds")
        try PluginConfigurationError.check("timeoutSeconds", timeoutSeconds, in: Self.timeoutRange, unit: "seconds")
        try PluginConfigurationError.check("outbox.maxBytes", outbox.maxBytes, in: Self.outboxBytesRange, unit: "bytes")
        try PluginConfigurationError.check("outbox.maxAgeSeconds", outbox.maxAgeSeconds, in: Self.outboxAgeRange, unit: "seconds")
        try PluginConfigurationError.check("retry.initialDelaySeconds", retry.initialDelaySeconds, in: Self.retryDelayRange, unit: "seconds")
        try PluginConfigurationError.check("retry.maxDelaySeconds", retry.maxDelaySeconds, in: Self.retryDelayRange, unit: "seconds")
        guard retry.maxDelaySeconds >= retry.initialDelaySeconds else {
            throw PluginConfigurationError(
                keyPath: "retry.maxDelaySeconds",
                reason: "must be at least retry.initialDelaySeconds (\(ConfigurationDecoder.format(retry.initialDelaySeconds)))")
        }
        try PluginConfigurationError.check("retry.jitter", retry.jitter, in: 0...1)
        switch auth.type {
        case .none: break
        case .bearer:
            guard (auth.tokenFile == nil) != (auth.tokenVariable == nil) else {
                throw PluginConfigurationError(keyPath: "auth", reason: "bearer auth needs exactly one of tokenFile or tokenVariable")
            }
            try Self.checkReadable(auth.tokenFile, "auth.tokenFile", "token file")
        case .basic:
            guard auth.username?.isEmpty == false else {
                throw PluginConfigurationError(keyPath: "auth.username", reason: "basic auth needs a username")
            }
            guard (auth.passwordFile == nil) != (auth.passwordVariable == nil) else {
                throw PluginConfigurationError(
                    keyPath: "auth", reason: "basic auth needs exactly one of passwordFile or passwordVariable")
            }
            try Self.checkReadable(auth.passwordFile, "auth.passwordFile", "password file")
        }
        if auth.type != .none, scheme == "http", !allowInsecureTransport, !Self.isLoopback(host) {
            throw PluginConfigurationError(
                keyPath: "url",
                reason: "\(auth.type.rawValue) credentials would cross the network in clear text to \(host) over http://; "
                    + "use https://, or set \"allowInsecureTransport\": true to accept that")
        }
        if format == .fhirR4 {
            guard let patientReference, patientReference.hasPrefix("Patient/"), patientReference.count > 8 else {
                throw PluginConfigurationError(
                    keyPath: "patientReference", reason: "fhir-r4 needs the subject as \"Patient/<id>\"")
            }
        }
        if let caFile {
            // Checked now so that a typo fails at start-up, not at the first delivery.
            try Self.checkReadable(caFile, "caFile", "CA file")
            guard scheme == "https" else {
                throw PluginConfigurationError(keyPath: "caFile", reason: "a CA file only applies to an https URL")
            }
        }
        return endpoint
    }

    /// A referenced file must be a readable regular file; checked at start-up (and by `config
    /// check`) so that a typo does not wait for the first delivery.
    private static func checkReadable(_ path: String?, _ keyPath: String, _ what: String) throws(PluginConfigurationError) {
        guard let path else { return }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw PluginConfigurationError(keyPath: keyPath, reason: "the \(what) \(path) does not exist")
        }
        guard !isDirectory.boolValue, FileManager.default.isReadableFile(atPath: path) else {
            throw PluginConfigurationError(keyPath: keyPath, reason: "cannot read the \(what) \(path)")
        }
    }

    /// Whether `host` is this machine: `localhost`, 127.0.0.0/8 or ::1.
    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "::1"
    }
}
