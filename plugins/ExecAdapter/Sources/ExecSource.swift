import GatewayRuntime
import HealthModel
public import SampleBus
public import AdapterHost

/// The `exec` source: a device adapter that is a program of its own, in any language, speaking
/// the adapter protocol on its stdin and stdout (docs/adapter-protocol.md).
///
/// `run` is one run of the adapter (``AdapterRun``): it returns when the gateway stops it, and
/// throws when the adapter ends on its own or breaks the protocol, so that the supervisor
/// restarts it with its backoff and counts the restart (`healthgate status`, `/metrics`).
public struct ExecSource: SampleSource, ConfigurablePlugin {
    public typealias Configuration = ExecSourceConfiguration
    public static let kind = "exec"
    public static let summary = "Any device, through an adapter program of yours speaking the adapter protocol (docs/adapter-protocol.md)."

    let settings: AdapterSettings
    let name: String
    let gatewayName: String
    let ids: SampleIDGenerator

    public init(settings: AdapterSettings, environment: PluginEnvironment) {
        self.settings = settings
        name = environment.name
        gatewayName = environment.gatewayName
        ids = environment.ids
    }

    public func run(context: SourceContext) async throws {
        let run = AdapterRun(settings: settings, name: name, gateway: gatewayName, ids: ids, context: context)
        let outcome = try await run.run()
        if Task.isCancelled { return }
        throw ExecSourceError(outcome: outcome)
    }
}

/// Why an adapter's run ended while the gateway was not stopping.
public struct ExecSourceError: Error, Hashable, Sendable, CustomStringConvertible {
    public var outcome: AdapterRun.Outcome
    public var description: String {
        switch outcome.protocolError {
        case let reason?: "the adapter broke the protocol (\(reason)) and \(outcome.termination)"
        case nil: "the adapter \(outcome.termination)"
        }
    }
}
