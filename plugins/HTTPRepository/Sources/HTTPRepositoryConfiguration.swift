import Foundation
import SampleBus

/// The payload format a repository expects (config key `format`).
public enum RepositoryFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// A HealthJSON batch: `{"heartbeatSeries": […], "samples": […], "workouts": […]}`
    /// (see openapi.yaml).
    case native
    /// A FHIR R4 transaction Bundle of Observations, one conditional create per sample.
    case fhirR4 = "fhir-r4"
    /// An array of Open mHealth data points.
    case openMHealth = "openmhealth"
}

/// What a full outbox does (config key `outbox.policy`).
public enum OutboxPolicy: String, Sendable, Hashable, Codable {
    /// Stop taking records from the inbox until deliveries make room, so back-pressure reaches
    /// the bus. Nothing is dropped.
    case block
    /// Drop the oldest pending records to make room; counted, logged as a warning, and shown in
    /// status.
    case dropOldest
}

/// The `http-repository` sink's settings. Every key except `url` has a default.
///
/// Secrets never appear in the file: a bearer token or a basic-auth password is read from a file
/// (`tokenFile`, `passwordFile`) or from an environment variable named here (`tokenVariable`,
/// `passwordVariable`).
public struct HTTPRepositoryConfiguration: Sendable, Hashable, Decodable {
    /// The endpoint every request is POSTed to. The only URL the sink contacts; redirects are
    /// never followed.
    public var url: String
    public var format: RepositoryFormat
    /// The most samples in one request.
    public var batchSize: Int
    /// How long a partial batch may wait for more samples before it is sent.
    public var batchIntervalMilliseconds: Int
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
            self.init(
                maxBytes: try c.decodeIfPresent(Int.self, forKey: .maxBytes) ?? 256 << 20,
                maxAgeSeconds: try c.decodeIfPresent(Double.self, forKey: .maxAgeSeconds) ?? 7 * 86_400,
                policy: try c.decodeIfPresent(OutboxPolicy.self, forKey: .policy) ?? .block)
        }
    }

    /// Exponential backoff with jitter.
    public struct Retry: Sendable, Hashable, Decodable {
        public var initialDelayMilliseconds: Int
        public var maximumDelayMilliseconds: Int
        /// Each delay is multiplied by a random factor in `1 ± jitter`.
        public var jitter: Double

        public init(initialDelayMilliseconds: Int = 500, maximumDelayMilliseconds: Int = 60_000, jitter: Double = 0.2) {
            self.initialDelayMilliseconds = initialDelayMilliseconds
            self.maximumDelayMilliseconds = maximumDelayMilliseconds
            self.jitter = jitter
        }

        enum CodingKeys: String, CodingKey { case initialDelayMilliseconds, maximumDelayMilliseconds, jitter }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                initialDelayMilliseconds: try c.decodeIfPresent(Int.self, forKey: .initialDelayMilliseconds) ?? 500,
                maximumDelayMilliseconds: try c.decodeIfPresent(Int.self, forKey: .maximumDelayMilliseconds) ?? 60_000,
                jitter: try c.decodeIfPresent(Double.self, forKey: .jitter) ?? 0.2)
        }
    }

    /// How the sink authenticates.
    public struct Auth: Sendable, Hashable, Decodable {
        public enum Kind: String, Sendable, Hashable, Decodable { case none, bearer, basic }
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
        url: String, format: RepositoryFormat = .native, batchSize: Int = 500, batchIntervalMilliseconds: Int = 1000,
        gzip: Bool = true, timeoutSeconds: Double = 30, outbox: Outbox = Outbox(), retry: Retry = Retry(),
        auth: Auth = Auth(), patientReference: String? = nil, caFile: String? = nil
    ) {
        self.url = url
        self.format = format
        self.batchSize = batchSize
        self.batchIntervalMilliseconds = batchIntervalMilliseconds
        self.gzip = gzip
        self.timeoutSeconds = timeoutSeconds
        self.outbox = outbox
        self.retry = retry
        self.auth = auth
        self.patientReference = patientReference
        self.caFile = caFile
    }

    enum CodingKeys: String, CodingKey {
        case url, format, batchSize, batchIntervalMilliseconds, gzip, timeoutSeconds, outbox, retry, auth
        case patientReference, caFile
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            url: try c.decode(String.self, forKey: .url),
            format: try c.decodeIfPresent(RepositoryFormat.self, forKey: .format) ?? .native,
            batchSize: try c.decodeIfPresent(Int.self, forKey: .batchSize) ?? 500,
            batchIntervalMilliseconds: try c.decodeIfPresent(Int.self, forKey: .batchIntervalMilliseconds) ?? 1000,
            gzip: try c.decodeIfPresent(Bool.self, forKey: .gzip) ?? true,
            timeoutSeconds: try c.decodeIfPresent(Double.self, forKey: .timeoutSeconds) ?? 30,
            outbox: try c.decodeIfPresent(Outbox.self, forKey: .outbox) ?? Outbox(),
            retry: try c.decodeIfPresent(Retry.self, forKey: .retry) ?? Retry(),
            auth: try c.decodeIfPresent(Auth.self, forKey: .auth) ?? Auth(),
            patientReference: try c.decodeIfPresent(String.self, forKey: .patientReference),
            caFile: try c.decodeIfPresent(String.self, forKey: .caFile))
    }

    /// Checks every value that decodes but cannot work.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    func validated() throws(PluginConfigurationError) -> URL {
        guard let endpoint = URL(string: url), let scheme = endpoint.scheme?.lowercased(),
            scheme == "http" || scheme == "https", endpoint.host != nil
        else {
            throw PluginConfigurationError(keyPath: "url", reason: "\"\(url)\" is not an http:// or https:// URL")
        }
        guard endpoint.user == nil, endpoint.password == nil else {
            throw PluginConfigurationError(
                keyPath: "url", reason: "credentials in the URL are not allowed; use auth.passwordFile or auth.passwordVariable")
        }
        guard (1...100_000).contains(batchSize) else {
            throw PluginConfigurationError(keyPath: "batchSize", reason: "must be between 1 and 100000, got \(batchSize)")
        }
        guard batchIntervalMilliseconds >= 0 else {
            throw PluginConfigurationError(keyPath: "batchIntervalMilliseconds", reason: "must not be negative")
        }
        guard timeoutSeconds > 0, timeoutSeconds.isFinite else {
            throw PluginConfigurationError(keyPath: "timeoutSeconds", reason: "must be positive")
        }
        guard outbox.maxBytes >= 4096 else {
            throw PluginConfigurationError(keyPath: "outbox.maxBytes", reason: "must be at least 4096, got \(outbox.maxBytes)")
        }
        guard outbox.maxAgeSeconds > 0, outbox.maxAgeSeconds.isFinite else {
            throw PluginConfigurationError(keyPath: "outbox.maxAgeSeconds", reason: "must be positive")
        }
        guard retry.initialDelayMilliseconds > 0, retry.maximumDelayMilliseconds >= retry.initialDelayMilliseconds else {
            throw PluginConfigurationError(
                keyPath: "retry", reason: "initialDelayMilliseconds must be positive and at most maximumDelayMilliseconds")
        }
        guard (0...1).contains(retry.jitter) else {
            throw PluginConfigurationError(keyPath: "retry.jitter", reason: "must be between 0 and 1")
        }
        switch auth.type {
        case .none: break
        case .bearer:
            guard (auth.tokenFile == nil) != (auth.tokenVariable == nil) else {
                throw PluginConfigurationError(keyPath: "auth", reason: "bearer auth needs exactly one of tokenFile or tokenVariable")
            }
        case .basic:
            guard auth.username?.isEmpty == false else {
                throw PluginConfigurationError(keyPath: "auth.username", reason: "basic auth needs a username")
            }
            guard (auth.passwordFile == nil) != (auth.passwordVariable == nil) else {
                throw PluginConfigurationError(
                    keyPath: "auth", reason: "basic auth needs exactly one of passwordFile or passwordVariable")
            }
        }
        if format == .fhirR4 {
            guard let patientReference, patientReference.hasPrefix("Patient/"), patientReference.count > 8 else {
                throw PluginConfigurationError(
                    keyPath: "patientReference", reason: "fhir-r4 needs the subject as \"Patient/<id>\"")
            }
        }
        if let caFile {
            // Checked now so that a typo fails at start-up, not at the first delivery.
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw PluginConfigurationError(keyPath: "caFile", reason: "cannot read the CA file \(caFile)")
            }
            guard endpoint.scheme == "https" else {
                throw PluginConfigurationError(keyPath: "caFile", reason: "a CA file only applies to an https URL")
            }
        }
        return endpoint
    }
}
