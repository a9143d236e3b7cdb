import HealthModel
import FoundationEssentials
import HealthStore
import RemoteSinkKit
import GatewayRuntime
import GatewayTime
public import SampleBus

/// The `http-repository` sink: sends the store's changes (records in their latest version, and
/// deletions) to an HTTP repository, at least once, following the store's change log
/// (``Follower``): its cursor is committed in the store after each acknowledgement, so a crash
/// costs nothing the store committed, and a batch sent again is the same request.
///
/// Answers: 2xx acknowledges; connection errors, timeouts, 5xx, 408 and 429 (honouring
/// Retry-After) and 401/403 are retried with backoff; another 4xx splits the batch to find the
/// refused change, which becomes a dead letter (`healthgate dead-letters`).
public struct HTTPRepositorySink: StoreFollower, ConfigurablePlugin {
    public typealias Configuration = HTTPRepositoryConfiguration
    public static let kind = "http-repository"
    public static let summary =
        "Sends the store's changes to an HTTP repository (native JSON, FHIR R4, Open mHealth, the HL7 PHD guide's FHIR), following the store's log."

    public let configuration: HTTPRepositoryConfiguration
    let follower: Follower

    /// Builds the sink from its settings with libcurl transports (one per request in flight);
    /// libcurl itself is loaded when the sink starts, not here. The catalog's entry point: for
    /// `fhir-phd` it reads the machine's permanent hardware address (``PermanentHardwareAddress``).
    /// - Throws: ``PluginConfigurationError`` when the environment has no store.
    public init(settings: HTTPRepositorySettings, environment: PluginEnvironment) throws {
        let library = CurlLibrary()
        try self.init(
            settings: settings, environment: environment,
            transports: (0..<settings.configuration.maxInFlight).map { _ in
                CurlTransport(library: library, caFile: settings.configuration.caFile)
            },
            random: { Double.random(in: 0..<1) },
            hardwareAddress: settings.configuration.format == .fhirPHD ? PermanentHardwareAddress.read() : nil)
    }

    /// Builds the sink with injected transports (tests: one that records or fails requests),
    /// random source (a value in 0..<1 per call, for the backoff's jitter) and, for `fhir-phd`,
    /// the machine's permanent hardware address (its PhgDevice's system identifier) and the
    /// clock's synchronisation as `environment.clockTrust` says it now (``PHDGatewayFacts``):
    /// facts as of the start, which a PhgDevice the server already holds does not change anyway.
    /// - Throws: ``PluginConfigurationError`` when the environment has no store.
    public init(
        settings: HTTPRepositorySettings, environment: PluginEnvironment, transports: [any HTTPTransport],
        random: @escaping @Sendable () -> Double, hardwareAddress: String? = nil
    ) throws {
        let configuration = settings.configuration
        self.configuration = configuration
        let patients = Dictionary(
            environment.participants.compactMap { participant in participant.fhirPatient.map { (participant.name, $0) } },
            uniquingKeysWith: { first, _ in first })
        let receiver = HTTPReceiver(
            endpoint: settings.endpoint,
            builder: PayloadBuilder(
                format: configuration.format, patientReference: configuration.patientReference,
                quantitySeries: configuration.quantitySeries, patients: patients,
                users: Dictionary(
                    environment.participants.compactMap { participant in participant.openMHealthUser.map { (participant.name, $0) } },
                    uniquingKeysWith: { first, _ in first }),
                gatewayName: environment.gatewayName,
                gatewayFacts: PHDGatewayFacts(
                    hardwareAddress: hardwareAddress, timeSync: PHDGatewayFacts.TimeSync(environment.clockTrust.state()))),
            gzip: configuration.gzip, deflate: DeflateLibrary(), timeout: configuration.timeoutSeconds,
            credentials: Credentials(auth: configuration.auth, variables: environment.variables), policy: configuration.retry.policy,
            name: environment.name, transports: TransportPool(transports))
        self.follower = try Follower(
            environment: environment, receiver: receiver,
            settings: FollowerSettings(configuration, batchInterval: .seconds(configuration.batchIntervalSeconds)), random: random)
    }

    /// Follows the store until a stop (see ``Follower``).
    public func run(context: FollowerContext) async throws {
        try await follower.run(context: context)
    }
}
