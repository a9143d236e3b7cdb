import HealthModel
public import FoundationEssentials
public import RemoteSinkKit
public import GatewayRuntime
public import SampleBus

/// The payload format a repository expects (config key `format`).
public enum RepositoryFormat: String, Sendable, Hashable, Encodable, ConfigurationChoice {
    /// A HealthJSON batch: `{"correlations": […], "deleted": […], "heartbeatSeries": […],
    /// "quantitySeries": […], "samples": […], "workouts": […]}` (see openapi.yaml).
    case native
    /// A FHIR R4 transaction Bundle: a `PUT Observation/<uuid>` per sample or series, a `DELETE`
    /// per deleted one.
    case fhirR4 = "fhir-r4"
    /// An array of Open mHealth data points, POSTed (a closed series' quantities each one); a
    /// deleted data point is a `DELETE <url>/<uuid>`.
    case openMHealth = "openmhealth"
    /// The FHIR form of the HL7 Personal Health Device implementation guide (PHD IG, IEEE
    /// 11073-10206): a transaction Bundle of PHD Observations (MDC codes, the guide's profiles)
    /// and the Devices they name, each created conditionally; a deleted one is a conditional
    /// `DELETE` by its identifier. Another contract than `fhir-r4`'s, for a Continua/H.812.5
    /// Observation server.
    case fhirPHD = "fhir-phd"

    /// Whether the format is a FHIR form: its readings need a subject (`patientReference`, or
    /// a participant's `identifiers.fhirPatient`).
    public var isFHIR: Bool { self == .fhirR4 || self == .fhirPHD }
}

/// The `http-repository` sink's settings. Each key is declared once, in
/// ``configurationKeys``, with its default the value `init()` gives it; decoding is strict
/// (``ConfigurationDecoder``) and ``validated(in:)`` checks every value without side effects.
///
/// Secrets never appear in the file: a bearer token or a basic-auth password is read from a file
/// (`tokenFile`, `passwordFile`) or from an environment variable named here (`tokenVariable`,
/// `passwordVariable`).
public struct HTTPRepositoryConfiguration: Sendable, Hashable, PluginConfigurationContract, RemoteSinkConfiguration,
    RenamedConfigurationKeys
{
    /// The endpoint every batch is POSTed to (Open mHealth deletions go to `<url>/<uuid>`). The
    /// only URL the sink contacts; redirects are never followed.
    public var url = ""
    public var format = RepositoryFormat.native
    /// How quantity series travel: as series (every version as it grows), or expanded into
    /// their quantities once closed (the form of the releases before series). Open mHealth
    /// always expands.
    public var quantitySeries = QuantitySeriesForm.series
    /// The most changes (records and deletions) in one request.
    public var batchSize = 1000
    /// How long a partial batch may wait for more changes before it is sent, in seconds.
    public var batchIntervalSeconds: Double = 1
    /// How many requests may wait for their answers at once.
    public var maxInFlight = 4
    /// Whether request bodies are gzip-compressed (`Content-Encoding: gzip`).
    public var gzip = true
    /// Seconds before a request times out (counts as a retryable failure).
    public var timeoutSeconds: Double = 30
    public var follow = FollowConfiguration()
    public var retry = RetryConfiguration()
    public var auth = Auth()
    /// For `fhir-r4` and `fhir-phd`: the subject of every Observation, e.g. `Patient/123`.
    public var patientReference: String?
    /// A PEM file of trusted root certificates for an `https` URL (a private repository's CA).
    /// It replaces the system trust store (libcurl's `CURLOPT_CAINFO`); nil trusts the system
    /// store. Must be readable and needs an `https` URL, or ``validated()`` refuses it.
    public var caFile: String?
    /// Allows credentials (bearer or basic auth) over plain `http://` to a host that is not
    /// loopback. Off by default: such a request carries the secret in clear text over the network.
    public var allowInsecureTransport = false

    /// Every key at its default (`url` empty: a file must give it).
    public init() {}

    /// The configuration posting to `url`, every other key at its default.
    public init(url: String) {
        self.url = url
    }

    /// Old key names, suggested when they are used: the shared ones
    /// (``RemoteSinkConfiguration/followingRenamedKeys``) and the batch interval's unit.
    public static var renamedKeys: [String: String] {
        followingRenamedKeys.merging(["batchIntervalMilliseconds": "batchIntervalSeconds"]) { shared, _ in shared }
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required(
                "url", \.url, .string(pattern: "^[Hh][Tt][Tt][Pp][Ss]?://"),
                "The endpoint every batch is POSTed to (http:// or https://, no credentials)"),
            ConfigurationKey(
                "format", \.format, RepositoryFormat.configurationShape,
                "The payload format: native HealthJSON, a FHIR R4 transaction Bundle, Open mHealth data points, "
                    + "or the HL7 Personal Health Device guide's FHIR form (fhir-phd)"),
            quantitySeriesKey(\.quantitySeries),
        ]
        + followingKeys(batchSize: batchSizeRange, batchInterval: \Self.batchIntervalSeconds)
        + [
            ConfigurationKey("gzip", \.gzip, .boolean, "Compress request bodies with gzip"),
            ConfigurationKey(
                "timeoutSeconds", \.timeoutSeconds, .number(timeoutRange, unit: "seconds"), "A request that takes longer fails and is retried"),
            ConfigurationKey("auth", \.auth, "Bearer or basic authentication; secrets come from files or variables"),
            ConfigurationKey("patientReference", \.patientReference, .string(pattern: "^Patient/.+"), "For fhir-r4 and fhir-phd: the subject of the Observations of readings attributed to nobody or to a person without identifiers.fhirPatient; absent: those are not sent"),
            ConfigurationKey("caFile", \.caFile, .nonEmptyText, "A PEM file of trusted root certificates for an https URL"),
            ConfigurationKey(
                "allowInsecureTransport", \.allowInsecureTransport, .boolean,
                "Allow credentials over plain http:// to a host that is not loopback"),
        ]
    }

    /// How the sink authenticates.
    public struct Auth: Sendable, Hashable, DeclaredConfiguration {
        public enum Kind: String, Sendable, Hashable, ConfigurationChoice { case none, bearer, basic }
        public var type = Kind.none
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

        /// No authentication.
        public init() {}

        // An inline secret would end up in backups and `healthgate config` output: refused.
        public static var configurationKeys: [ConfigurationKey<Self>] {
            [
                ConfigurationKey("type", \.type, Kind.configurationShape, "How the sink authenticates"),
                ConfigurationKey("tokenFile", \.tokenFile, .nonEmptyText, "Bearer: a file holding the token"),
                ConfigurationKey("tokenVariable", \.tokenVariable, .nonEmptyText, "Bearer: the environment variable holding the token"),
                ConfigurationKey("username", \.username, .nonEmptyText, "Basic: the user name"),
                ConfigurationKey("passwordFile", \.passwordFile, .nonEmptyText, "Basic: a file holding the password"),
                ConfigurationKey("passwordVariable", \.passwordVariable, .nonEmptyText, "Basic: the environment variable holding the password"),
                .refused("token", "secrets are never written inline; use tokenFile or tokenVariable"),
                .refused("password", "secrets are never written inline; use passwordFile or passwordVariable"),
            ]
        }
    }

    /// The allowed `batchSize`.
    public static let batchSizeRange = 1...100_000
    /// The allowed `timeoutSeconds`.
    public static let timeoutRange: ClosedRange<Double> = 0.001...3600

    /// Checks every value (``validated()``); the settings are the configuration with its
    /// endpoint resolved.
    /// Also refuses a FHIR format (`fhir-r4`, `fhir-phd`) with no subject for any Observation:
    /// neither `patientReference` nor a participant with `identifiers.fhirPatient`.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> HTTPRepositorySettings {
        let endpoint = try validated()
        if format.isFHIR, patientReference == nil, !environment.participants.contains(where: { $0.fhirPatient != nil }) {
            throw PluginConfigurationError(
                keyPath: "patientReference",
                reason: "\(format.rawValue) needs a subject: patientReference, or participants with identifiers.fhirPatient")
        }
        return HTTPRepositorySettings(configuration: self, endpoint: endpoint)
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
        try checkFollowingKeys()
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
        if format.isFHIR, let patientReference, !(patientReference.hasPrefix("Patient/") && patientReference.count > 8) {
            throw PluginConfigurationError(keyPath: "patientReference", reason: "\(format.rawValue) needs the subject as \"Patient/<id>\"")
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
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw PluginConfigurationError(keyPath: keyPath, reason: "the \(what) \(path) does not exist")
        }
        guard !isDirectory, FileManager.default.isReadableFile(atPath: path) else {
            throw PluginConfigurationError(keyPath: keyPath, reason: "cannot read the \(what) \(path)")
        }
    }

    /// Whether `host` is this machine: `localhost`, 127.0.0.0/8 or ::1.
    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmed(where: { $0 == "[" || $0 == "]" })
        return host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "::1"
    }
}

/// An `http-repository` sink's settings: its configuration checked, with the endpoint URL it
/// posts to. ``HTTPRepositoryConfiguration/validated(in:)`` makes them; the sink is built from
/// them and checks nothing again.
public struct HTTPRepositorySettings: Sendable, Hashable {
    public var configuration: HTTPRepositoryConfiguration
    public var endpoint: URL
}
